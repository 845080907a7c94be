//===- launch_results.h - A launch's small results, asked for with it -----===//
//
// A target region retrieves its map(from:) results right after its launch.
// Those retrieves come after the launch has left, so each would be one more
// round trip; instead the plugin learns, per kernel, which small retrieves
// followed its last launch, named relative to the kernel's arguments (the
// results are read from the blocks the kernel was given, so they keep that
// shape from one run of the region to the next), and asks for them with the
// next launch. A retrieve of one of those ranges, while nothing but
// retrieves has followed the launch in its queue, takes the bytes that came
// back with the launch's reply.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "client/connection.h"
#include "memory_pool.h"
#include "protocol/messages.h"

#include <atomic>
#include <mutex>
#include <vector>

namespace ompdpu::plugin {

/// A small retrieve that followed a launch in its queue: Size bytes from
/// Args[Arg] + Delta.
struct ResultPiece {
  uint32_t Arg = 0;
  uint64_t Delta = 0;
  uint64_t Size = 0;
  bool operator==(const ResultPiece &O) const {
    return Arg == O.Arg && Delta == O.Delta && Size == O.Size;
  }
};

/// What followed a kernel's last launches in their queues, learnt as those
/// queues moved on. Shared by the threads that launch the kernel.
class KernelResults {
public:
  enum class Follow : uint8_t {
    None,    ///< no small retrieves: the next launch leaves at once
    Hold,    ///< small retrieves, not (yet) the same twice in a row relative
             ///< to the arguments: the next launch waits to leave with them
             ///< (one request, one reply)
    Predict, ///< the same small retrieves, relative to the arguments, after
             ///< the last two launches (predicted()): the next launch
             ///< leaves at once and asks for them, so its round trip
             ///< overlaps libomptarget's work after the launch and they
             ///< are at hand when retrieved (or, when it cannot ask for
             ///< them, it waits for them as with Hold)
  };
  Follow follow() const { return F.load(std::memory_order_relaxed); }
  std::vector<ResultPiece> predicted() const {
    std::lock_guard<std::mutex> L(M);
    return Predicted;
  }
  /// A launch was followed by no small retrieves (None) or by some not
  /// relative to its arguments (Hold).
  void saw(Follow What);
  /// A launch was followed by these, relative to its arguments. A pattern
  /// that changes from one launch to the next (a chunk's offset in a loop,
  /// threads with their own) is never predicted: a wrong prediction costs
  /// a second round trip, holding the launch none.
  void saw(const std::vector<ResultPiece> &Seen);

private:
  std::atomic<Follow> F{Follow::None};
  mutable std::mutex M; ///< guards Predicted
  /// What followed the last launch seen: the prediction when F is
  /// Predict, a candidate for one when it is Hold.
  std::vector<ResultPiece> Predicted;
};

/// Results asked for with a launch: taken by a retrieve, or not. Counted
/// only with OMPDPU_TRACE (Trace), shown at the end.
struct ResultStats {
  explicit ResultStats(bool T) : Trace(T) {}
  const bool Trace;
  std::atomic<uint64_t> Taken{0}, Missed{0};
};

/// One queue's last launch since its last synchronize: what followed it,
/// and the results asked for with it.
class LaunchWindow {
public:
  /// A launch of the kernel K with Args (as the kernel gets them) joined
  /// the queue; finish() the previous one first.
  void begin(KernelResults &K, const std::vector<uint64_t> &Args);
  /// An operation other than a small retrieve came to the queue: what
  /// follows is no longer a result of this launch.
  void close() { Open = false; }
  bool open() const { return Open; }
  /// Results were asked for since the queue's last synchronize (their
  /// bytes may still be arriving in Staging).
  bool asked() const { return Ticket != nullptr; }
  /// Ask for K's predicted results: append them to a Batch's out pieces
  /// and destinations, at most Room pieces. False, with nothing appended,
  /// when they do not fit this launch or Pool does not vouch for a range
  /// (the server refuses a Batch that reads outside its memory).
  bool ask(std::vector<protocol::Piece> &Out,
           std::vector<client::HostRange> &Into, size_t Room,
           DeviceMemoryPool &Pool);
  /// The Batch that carries the asked results left as T.
  void sent(client::Ticket T) { Ticket = std::move(T); }
  /// A small retrieve while open(): learn it; true when its bytes come with
  /// the asked results (copied to Dst when they arrive, through C).
  bool take(client::Connection &C, void *Dst, uint64_t Src, uint64_t Size,
            ResultStats &Stats);
  /// Teach the kernel what followed its launch, and forget the launch.
  void finish(ResultStats &Stats);
  /// The queue synchronized: the asked results have arrived.
  void synchronized() { Ticket.reset(); }

private:
  KernelResults *Kernel = nullptr; ///< null: no launch to learn from
  std::vector<uint64_t> Args;
  bool Open = false;             ///< only small retrieves since the launch
  std::vector<ResultPiece> Seen; ///< the retrieves while Open
  bool Unrelated = false;        ///< one of them was not relative to Args
  /// The prediction as it was asked for, and as device ranges whose bytes
  /// arrive in Staging with Ticket's reply; each is taken once. Emptied
  /// when the launch is finished (Staging lasts until synchronize).
  client::Ticket Ticket;
  std::vector<ResultPiece> Asked;
  struct AskedRange {
    protocol::Piece Range;
    uint64_t Offset = 0; ///< in Staging
    bool Taken = false;
  };
  std::vector<AskedRange> AskedRanges;
  std::vector<uint8_t> Staging;
};

} // namespace ompdpu::plugin
