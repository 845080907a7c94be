//===- kernel_runner.h - Where and when a session's kernels run -*- C++ -*-===//
//
// Leader/followers: one thread at a time (the leader) runs the session's
// loop and owns all session state. A leader that picks up a long kernel
// hands the loop to a follower and runs the kernel itself, so a kernel
// starts without a thread hand-off and the session keeps serving while it
// runs. Kernels known to be short run on the loop thread: a hand-off would
// cost more than the kernel.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/fifo.h"
#include "server/executor.h"
#include "server/session_trace.h"

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ompdpu::server {

class KernelRunner {
public:
  /// What the runner needs of the session's loop.
  struct Loop {
    /// One round of the session's own work (transport progress, requests
    /// taken in); returns how much happened.
    std::function<unsigned()> Poll;
    /// Answer a finished kernel; on the loop thread.
    std::function<void(const KernelJob &)> Done;
    /// True once the session should end.
    std::function<bool()> StopRequested;
    /// Sleep until there is work or a wake-up, at most this many ms.
    std::function<void(int)> Sleep;
    /// Wake the loop from Sleep (any thread).
    std::function<void()> Wake;
    /// Called now and then while idle (MPI progress); may be empty.
    void (*IdleHook)() = nullptr;
    double SpinMicros = 1000; ///< busy-poll time before sleeping
    bool SharedCores = false; ///< yield after every poll
  };

  /// Kernels that took less than this (on average) run on the loop thread.
  static constexpr double kInlineKernelMicros = 200;
  static constexpr unsigned kMaxThreads = 16;

  explicit KernelRunner(Loop L) : L(std::move(L)) {}

  /// Start a kernel: at once, on this (the loop) thread, when it is known
  /// to be short and MayRunHere; otherwise when the loop reaches it.
  void start(KernelJob Job, bool MayRunHere);
  /// Run a kernel known to be short on the loop thread now, before its
  /// request is even copied (the fast path); false when it is not short.
  bool runShortNow(KernelInfo &K, const uint64_t *Args, size_t Count);
  bool isShort(const KernelInfo &K) const {
    return K.Timing.Runs >= 2 && K.Timing.AverageMicros < kInlineKernelMicros;
  }
  /// Run F on the loop thread (from any thread).
  void post(std::function<void()> F);
  /// Lead the loop on the calling thread until StopRequested; returns once
  /// every follower has ended.
  void run();
  /// Threads started so far besides the caller of run().
  size_t followers();
  /// Where kernel calls are recorded while the client traces.
  void setTrace(SessionTrace *T) { Trace = T; }

private:
  void threadMain(bool Original);
  void lead();
  double call(KernelInfo &K, const uint64_t *Args, size_t Count, bool Timed);
  void callShort(KernelInfo &K, const uint64_t *Args, size_t Count);

  Loop L;
  SessionTrace *Trace = nullptr;
  Fifo<KernelJob> Ready;
  std::mutex FollowM; // guards the five members below
  std::condition_variable FollowCV;
  bool LeaderActive = false, LeaderWanted = false, Stopping = false;
  unsigned IdleFollowers = 0;
  std::vector<std::thread> Threads;
  std::mutex PostM;
  std::vector<std::function<void()>> Posted;
  std::atomic<bool> HavePosted{false}; // lets the loop skip PostM when idle
};

} // namespace ompdpu::server
