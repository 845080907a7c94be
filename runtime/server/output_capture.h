//===- output_capture.h - Kernels' stdout and stderr, for the client ------===//
//
// Kernels print with printf, puts, std::cout, perror or write(1, ...). In a
// session process all of it goes to the output rings (output_ring.h) and
// from there, through the session's loop, to the client, which writes it to
// the program's own stdout and stderr. stdio and iostreams write straight
// into the rings (stdout and stderr are unbuffered streams of ours), so a
// kernel's output is there when it returns and leaves before its reply;
// what bypasses stdio (write(2) on fds 1 and 2, child processes) comes
// through pipes, read by a thread and, after a kernel, by afterKernel().
//
//===----------------------------------------------------------------------===//
#pragma once

#include "server/output_ring.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <mutex>
#include <thread>

namespace ompdpu::server {

class OutputCapture {
public:
  /// Capture this process's stdout and stderr into the area mapped from
  /// AreaFd (made by the supervisor). Null on failure (logged).
  static OutputCapture *install(int AreaFd);
  /// The installed capture, or null.
  static OutputCapture *active() { return Active; }

  /// Called (from any thread) when output waits to be sent.
  void setWake(std::function<void()> W) { Wake = std::move(W); }
  /// Output waits to be sent (cheap: one relaxed load).
  bool pending() const { return Pending.load(std::memory_order_relaxed); }
  /// On the loop thread: hand the bytes not handed over yet to Send(stream,
  /// offset in it, data, len), in pieces of at most MaxPiece bytes. They stay
  /// in the ring (and count against its room) until sent() says UCX has them.
  template <typename SendFn> void drain(size_t MaxPiece, SendFn Send);
  /// On the loop thread: the oldest Len bytes handed over of stream S have
  /// left (UCX completed their send). Call while a HandOver lives.
  void sent(int S, size_t Len);
  /// Bytes handed over and not sent yet.
  bool inFlight() const { return InFlight != 0; }
  /// While a HandOver lives, a crashing kernel's thread waits (briefly)
  /// before the process dies, so that the rings never show as unsent what
  /// UCX has delivered, nor lose what it has not: the supervisor sends the
  /// rest after the session's death.
  struct HandOver {
    HandOver() { Busy.store(true, std::memory_order_seq_cst); }
    ~HandOver() { Busy.store(false, std::memory_order_release); }
  };
  /// For the crash handler (async-signal-safe): wait up to about 50 ms
  /// for a hand-over, or a move from a pipe to a ring, under way on another
  /// thread.
  static void waitForHandOver();
  /// For the crash handler (async-signal-safe): what kernels wrote to fds 1
  /// and 2 and no thread took from the pipes yet goes to the supervisor as
  /// SessionRawOutput frames on ChannelFd.
  static void forwardUnpumped(int ChannelFd);
  /// The calling thread runs the session's loop: when a ring is full it
  /// cannot wait for the loop to empty it (see write()).
  static void setLoopThread(bool On) { OnLoop = On; }
  /// Stop waiting writers (the session ends).
  void stop();

  /// Append to stream S (1 or 2); waits while its ring is full.
  void write(int S, const char *Data, size_t Len);
  /// After a kernel, on its thread: what it wrote to fds 1 and 2 moves
  /// into the rings before its reply. Skipped for short kernels on the
  /// loop thread until the session has seen such writes (the check is a
  /// system call), so a short kernel's first raw write may trail its reply.
  void afterKernel();
  /// Bytes of stream S dropped since the last call (written by a kernel on
  /// the loop thread while the ring was full).
  uint64_t takeDropped(int S);

private:
  OutputCapture() = default;
  void pumpFds();
  void readPipe(int S);
  std::mutex PipeM[2]; // one reader of a pipe at a time, in order
  std::atomic<bool> RawSeen{false};
  OutputArea *Area = nullptr;
  std::mutex M[2];                 // one writer at a time per ring
  std::mutex SpaceM;               // writers waiting for room
  std::condition_variable SpaceCV; // notified when bytes leave
  std::atomic<bool> Pending{false};
  uint64_t Issued[2] = {0, 0}; // bytes handed to Send, per stream (loop only)
  size_t InFlight = 0;         // of those, not yet sent (loop only)
  static std::atomic<bool> Busy;
  static std::atomic<int> Pumping; // threads between a pipe and a ring
  std::atomic<bool> Stopping{false};
  std::atomic<uint64_t> Dropped[2] = {0, 0};
  std::function<void()> Wake;
  int PipeFds[2] = {-1, -1}; // read ends of the pipes behind fds 1 and 2
  std::thread Pump;
  static OutputCapture *Active;
  static thread_local bool OnLoop;
};

template <typename SendFn>
void OutputCapture::drain(size_t MaxPiece, SendFn Send) {
  Pending.store(false, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  for (int S = 0; S < 2; ++S) {
    OutputRing &R = Area->Streams[S];
    uint64_t Tail = R.Tail.load(std::memory_order_acquire);
    while (Issued[S] < Tail) {
      size_t At = Issued[S] % kOutputRingBytes;
      size_t Len = std::min<uint64_t>(
          {Tail - Issued[S], MaxPiece, kOutputRingBytes - At});
      uint64_t Offset = Issued[S];
      Issued[S] += Len;
      InFlight += Len;
      Send(S + 1, Offset, R.Data + At, Len);
    }
  }
}

} // namespace ompdpu::server
