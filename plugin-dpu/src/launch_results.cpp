//===- launch_results.cpp - A launch's small results, asked for with it ---===//
#include "launch_results.h"

namespace ompdpu::plugin {

/// Arguments a result may be relative to: it starts at most this far
/// beyond one (an array section's start beyond its base pointer).
constexpr uint64_t kMaxResultDelta = 1 << 20;
/// Results asked for with one launch: at most this many bytes...
constexpr uint64_t kMaxAskedBytes = 64 * 1024;
/// ... in at most this many pieces.
constexpr size_t kMaxAskedPieces = 64;

void KernelResults::saw(Follow What) {
  if (F.load(std::memory_order_relaxed) != What)
    F.store(What, std::memory_order_relaxed);
}

void KernelResults::saw(const std::vector<ResultPiece> &Seen) {
  std::lock_guard<std::mutex> L(M);
  if (Seen == Predicted) {
    F.store(Follow::Predict, std::memory_order_relaxed);
    return;
  }
  Predicted = Seen; // predicted once it comes again
  F.store(Follow::Hold, std::memory_order_relaxed);
}

void LaunchWindow::begin(KernelResults &K,
                         const std::vector<uint64_t> &LaunchArgs) {
  Kernel = &K;
  Args = LaunchArgs;
  Open = true;
}

void LaunchWindow::finish(ResultStats &Stats) {
  if (!Kernel)
    return;
  using Follow = KernelResults::Follow;
  if (Seen.empty())
    Kernel->saw(Follow::None);
  else if (Unrelated)
    Kernel->saw(Follow::Hold);
  else if (!(Ticket && Seen == Asked))
    Kernel->saw(Seen); // a prediction that came true as asked stands
  // What is not taken by now is taken by nobody.
  if (Stats.Trace)
    for (const AskedRange &A : AskedRanges)
      Stats.Missed += !A.Taken;
  AskedRanges.clear(); // Staging stays until the queue synchronizes
  Kernel = nullptr;
  Open = false;
  Seen.clear();
  Unrelated = false;
}

bool LaunchWindow::ask(std::vector<protocol::Piece> &Out,
                       std::vector<client::HostRange> &Into, size_t Room,
                       DeviceMemoryPool &Pool) {
  Asked = Kernel->predicted();
  if (Asked.empty() || Asked.size() > kMaxAskedPieces || Asked.size() > Room)
    return false;
  AskedRanges.clear();
  uint64_t Total = 0;
  for (const ResultPiece &P : Asked) {
    uint64_t Src = P.Arg < Args.size() ? Args[P.Arg] + P.Delta : 0;
    // The server refuses a Batch that reads outside its memory, kernel and
    // all: ask only for bytes the pool knows to be there.
    if (P.Arg >= Args.size() || Total + P.Size > kMaxAskedBytes ||
        !Pool.holds(Src, P.Size)) {
      AskedRanges.clear(); // nothing asked
      return false;
    }
    AskedRanges.push_back({{Src, P.Size}, Total});
    Total += P.Size;
  }
  Staging.resize(Total);
  for (const AskedRange &A : AskedRanges) {
    Out.push_back(A.Range);
    Into.push_back({Staging.data() + A.Offset, A.Range.Size});
  }
  return true;
}

bool LaunchWindow::take(client::Connection &C, void *Dst, uint64_t Src,
                        uint64_t Size, ResultStats &Stats) {
  // Learn it, relative to the argument it lies closest beyond.
  ResultPiece Piece;
  bool Related = false;
  for (size_t K = 0; K < Args.size(); ++K)
    if (Src >= Args[K] && Src - Args[K] < kMaxResultDelta &&
        (!Related || Src - Args[K] < Piece.Delta)) {
      Piece = {static_cast<uint32_t>(K), Src - Args[K], Size};
      Related = true;
    }
  if (Related)
    Seen.push_back(Piece);
  else
    Unrelated = true;
  if (!Ticket)
    return false;
  for (AskedRange &A : AskedRanges)
    if (!A.Taken && A.Range.DevicePtr == Src && A.Range.Size == Size) {
      // The bytes were read right after the kernel; since then the queue
      // has only had retrieves (the window is open), which change nothing
      // on the device: they are what this retrieve would read.
      A.Taken = true;
      if (Stats.Trace)
        ++Stats.Taken;
      C.copyOnArrival(Ticket, Staging.data() + A.Offset, Dst, Size);
      return true;
    }
  return false; // not predicted: goes as asked
}

} // namespace ompdpu::plugin
