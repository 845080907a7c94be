//===- dpu_device.h - One DPU as an OpenMP device -----------------*- C++
//-*-===//
//
// The device logic behind the ABI glue: images, memory, queues and events of
// one DPU, on top of a protocol Connection. Errors are values here and turn
// into OFFLOAD_FAIL (after a message naming the device) only in the glue.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "client/connection.h"
#include "memory_pool.h"
#include "omptarget_abi.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <vector>

namespace ompdpu::plugin {

/// Operations of one __tgt_async_info, issued without waiting; the server
/// runs them in Seq order.
struct Event;

/// What an event waits for: the operations of its queue issued before it.
struct Horizon {
  std::vector<client::Ticket> Done; ///< must have finished
  /// The Batch the event was recorded in, when that Batch runs a kernel:
  /// the event follows the Batch's copies but precedes its kernel, so only
  /// its bytes must be in place (asked of the server with Landed).
  client::Ticket Partial;
  uint32_t Queue = 0, Seq = 0; ///< Partial's queue and sequence number
};

/// A small retrieve that followed a launch in its queue, named relative to
/// the launch's arguments: Size bytes from Args[Arg] + Delta. A region's
/// map(from:) results are retrieved from the blocks its kernel was given,
/// so they keep this shape from one run of the region to the next.
struct ResultPiece {
  uint32_t Arg = 0;
  uint64_t Delta = 0;
  uint64_t Size = 0;
  bool operator==(const ResultPiece &O) const {
    return Arg == O.Arg && Delta == O.Delta && Size == O.Size;
  }
};

/// What the target table holds as a kernel's address: libomptarget only
/// hands it back to launch(), which then needs no lookup.
struct KernelRecord {
  explicit KernelRecord(uint16_t H) : Handle(H) {}
  uint16_t Handle = 0; ///< names the kernel in Run requests
  /// What followed the kernel's last launch in its queue, learnt when that
  /// queue moved on:
  enum class Results : uint8_t {
    None,    ///< no small retrieves: the next launch leaves at once
    Hold,    ///< small retrieves, not relative to the arguments: the next
             ///< launch waits to leave with them (one request, one reply)
    Predict, ///< relative to the arguments (Predicted): the next launch
             ///< leaves at once and asks for them, so its round trip
             ///< overlaps libomptarget's work after the launch and they
             ///< are at hand when retrieved (or, when it cannot ask for
             ///< them, it waits for them as with Hold)
  };
  std::atomic<Results> Follow{Results::None};
  std::mutex M;                       ///< guards Predicted
  std::vector<ResultPiece> Predicted; ///< when Follow is Predict
};

struct AsyncQueue {
  uint32_t Id = 0;
  uint64_t Epoch = 0; ///< incremented each time the queue is reused
  uint32_t NextSeq = 0;
  std::vector<client::Ticket> InFlight;
  /// InFlight as events see it, shared by every event recorded until the
  /// queue changes (libomptarget records one event per new mapping).
  std::shared_ptr<const Horizon> Snapshot;
  /// The queue's small operations not sent yet: they leave together, as
  /// one Batch, when an operation that cannot join them comes, or at
  /// synchronize. A target region's small maps, its launch and its small
  /// results then make one request and one reply. Operations join in the
  /// order a Batch runs them: submits, a launch, retrieves.
  struct PendingBatch {
    std::vector<protocol::Piece> In;
    std::vector<uint8_t> InBytes; ///< the submits' bytes, back to back
    uint16_t Kernel = 0;          ///< 0: no launch yet
    std::vector<uint64_t> Args;
    std::vector<protocol::Piece> Out;
    std::vector<client::HostRange> Into; ///< where Out's bytes land
    bool empty() const { return In.empty() && !Kernel && Out.empty(); }
    /// A submit would run after the launch or retrieves already here.
    bool closedToSubmits() const { return Kernel || !Out.empty(); }
  } Batch;
  /// The last launch since the queue's last synchronize, what followed it
  /// and the results asked for with it.
  struct LaunchWindow {
    KernelRecord *Kernel = nullptr; ///< null: no launch to learn from
    std::vector<uint64_t> Args;
    /// Only small retrieves came since the launch: a retrieve now is one
    /// of the region's results.
    bool Open = false;
    std::vector<ResultPiece> Seen; ///< the retrieves while Open
    bool Unrelated = false;        ///< one of them was not relative to Args
    /// Results asked for with the launch (the prediction as it was read,
    /// and as device ranges), arriving in Staging with the reply of
    /// Ticket; a retrieve of one of these ranges takes its bytes from
    /// there, once. Null Ticket: none asked for since the last synchronize.
    client::Ticket Ticket;
    std::vector<ResultPiece> Asked;
    struct AskedRange {
      protocol::Piece Range;
      uint64_t Offset = 0; ///< in Staging
      bool Taken = false;
    };
    std::vector<AskedRange> AskedRanges;
    std::vector<uint8_t> Staging;
  } Launch;
  /// Submit bytes sent and still read by UCX until the queue is
  /// synchronized (moving a vector keeps its bytes where they are).
  std::vector<std::vector<uint8_t>> Sent;
  /// Emptied buffers of earlier regions, for Batch.InBytes to reuse: a
  /// region of small maps then allocates nothing for them.
  std::vector<std::vector<uint8_t>> SpareBytes;
  /// Where events recorded while the batch is unsent learn what they wait
  /// for, once it leaves (null: none recorded).
  std::shared_ptr<struct FlushPoint> Point;
};

/// A queue's batch leaving, for the events recorded before it left: what
/// they wait for is known from then on. One per batch, not one per event:
/// libomptarget records an event for each new mapping of a region.
struct FlushPoint {
  std::mutex M;
  std::condition_variable Left;
  bool Sent = false;
  /// An event was recorded after the batch's launch joined it (set by the
  /// queue's thread before the batch leaves).
  bool AnyAfterKernel = false;
  /// For events recorded before the batch's launch joined it: its copies
  /// (Horizon::Partial) but not its kernel. Without a launch, All.
  std::shared_ptr<const Horizon> BeforeKernel;
  std::shared_ptr<const Horizon> All; ///< for events recorded after it
};

/// A recorded point in a queue: the operations issued before it. The
/// queue's batch may not be sent yet when the event is recorded; the event
/// then waits for its FlushPoint.
///
/// No lock: libomptarget records, waits for and destroys a mapping's event
/// only under that mapping's lock (or after removing it), never two at once.
/// The one thing that changes under a waiter, a FlushPoint, has its own.
struct Event {
  uint32_t QueueId = 0;     ///< queue it was recorded in (0: none)
  uint64_t QueueEpoch = 0;  ///< that queue's use (queues are reused)
  bool AfterKernel = false; ///< recorded after the pending batch's launch
  std::shared_ptr<const Horizon> Before; ///< known when recorded, or...
  std::shared_ptr<FlushPoint> Point;     ///< ... once this point is Sent
  /// Its batch has not left yet.
  bool pending() const;
};

/// Events come and go with every mapping: they are recycled, not freed.
Event *acquireEvent();
void releaseEvent(Event *E);

/// One DPU server seen as an OpenMP device.
class DpuDevice {
public:
  DpuDevice(int32_t Index, std::unique_ptr<client::Connection> C);
  ~DpuDevice();

  /// "device 0 (127.0.0.1:18515)", the prefix of every message.
  std::string name() const;
  /// Facts from the handshake.
  const client::ServerInfo &info() const { return Conn->info(); }
  /// e_machine of images this device runs.
  uint16_t machine() const;

  Expected<__tgt_target_table *> loadBinary(__tgt_device_image *Image);
  Expected<void *> alloc(int64_t Size, int32_t Kind);
  Status free(void *Ptr);
  Status submit(void *Dst, const void *Src, int64_t Size,
                __tgt_async_info *Async);
  Status retrieve(void *Dst, const void *Src, int64_t Size,
                  __tgt_async_info *Async);
  Status exchange(const void *Src, DpuDevice &Dst, void *DstPtr, int64_t Size,
                  __tgt_async_info *Async);
  /// Entry is what loadBinary put in the target table for the kernel.
  Status launch(void *Entry, void **Args, ptrdiff_t *Offsets, int32_t NumArgs,
                __tgt_async_info *Async);
  /// Wait for every operation of the queue; reset Async->Queue.
  Status synchronize(__tgt_async_info *Async);

  Status recordEvent(Event *E, __tgt_async_info *Async);
  /// Make Async (or, without it, the caller) wait for the event.
  Status waitEvent(Event *E, __tgt_async_info *Async);

  /// Human-readable description (print_device_info).
  void printInfo() const;
  const client::Connection &connection() const { return *Conn; }
  /// Results asked for with a launch and taken by a retrieve, or not;
  /// counted with OMPDPU_TRACE only.
  uint64_t resultsTaken() const { return ResultsTaken; }
  uint64_t resultsMissed() const { return ResultsMissed; }

private:
  AsyncQueue *queueOf(__tgt_async_info *Async);
  /// Send the queue's batch, if any.
  void flushBatch(AsyncQueue &Q);
  /// An operation other than a small retrieve comes to Q: what follows is
  /// no longer a result of Q's last launch.
  static void closeWindow(AsyncQueue &Q) { Q.Launch.Open = false; }
  /// Teach Q's last launch's kernel what followed it; forget the launch.
  void finishLaunch(AsyncQueue &Q);
  /// Ask for Kernel's predicted results with the launch in Q's batch;
  /// false (and nothing asked) when they do not fit this launch.
  bool askForResults(AsyncQueue &Q, KernelRecord &Kernel);
  /// A small retrieve in Q's launch window: learn it, and take its bytes
  /// from the results asked for with the launch when they are there.
  bool takeAskedResult(AsyncQueue &Q, void *Dst, uint64_t Src, uint64_t Size);
  /// Remember an operation issued through Q.
  static void track(AsyncQueue &Q, client::Ticket T);
  /// The operations issued through Q so far, as one shared list.
  static std::shared_ptr<const Horizon> snapshot(AsyncQueue &Q);
  /// Issue through a queue (Async set) or synchronously (Async null).
  template <typename IssueFn>
  Status perform(__tgt_async_info *Async, IssueFn F);

  int32_t Index;
  std::unique_ptr<client::Connection> Conn;
  DeviceMemoryPool Pool;
  /// Results asked for with a launch: taken by a retrieve, or not. Counted
  /// only with OMPDPU_TRACE (Trace), which shows them at the end.
  const bool Trace;
  std::atomic<uint64_t> ResultsTaken{0}, ResultsMissed{0};
  std::mutex M; // guards the members below
  uint32_t NextQueueId = 1;
  std::vector<std::unique_ptr<AsyncQueue>> FreeQueues;
  /// One more free queue, outside M (see queueOf); owned by the device.
  std::atomic<AsyncQueue *> SpareQueue{nullptr};
  struct ImageTable {
    std::vector<__tgt_offload_entry> Entries;
    std::list<std::string> Names;     // storage the entries' names point into
    std::deque<KernelRecord> Kernels; // storage the kernel entries point to
    __tgt_target_table Table{};
  };
  std::list<ImageTable> Images;
};

} // namespace ompdpu::plugin
