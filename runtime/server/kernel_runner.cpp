//===- kernel_runner.cpp - Where and when a session's kernels run ---------===//
#include "server/kernel_runner.h"

#include "server/crash_report.h"
#include "server/output_capture.h"

#include <chrono>
#include <sched.h>

namespace ompdpu::server {

void KernelRunner::post(std::function<void()> F) {
  {
    std::lock_guard<std::mutex> G(PostM);
    Posted.push_back(std::move(F));
    HavePosted.store(true, std::memory_order_release);
  }
  L.Wake();
}

size_t KernelRunner::followers() {
  std::lock_guard<std::mutex> F(FollowM);
  return Threads.size();
}

void KernelRunner::start(KernelJob Job, bool MayRunHere) {
  // Not when a finished operation started it: a queue of waiting kernels
  // would then run as a chain of nested calls.
  if (MayRunHere && isShort(*Job.Kernel)) {
    callShort(*Job.Kernel, Job.Args.data(), Job.Args.size());
    L.Done(Job);
    return;
  }
  Ready.push(std::move(Job));
}

bool KernelRunner::runShortNow(KernelInfo &K, const uint64_t *Args,
                               size_t Count) {
  if (!isShort(K))
    return false;
  callShort(K, Args, Count);
  return true;
}

void KernelRunner::callShort(KernelInfo &K, const uint64_t *Args,
                             size_t Count) {
  // Time only every 8th run: two clock reads are a noticeable share of a
  // short kernel's round trip, and a kernel that turns long is still
  // noticed soon.
  bool Timed = (++K.Timing.Calls & 7) == 0;
  OutputCapture::setLoopThread(true);
  double Micros = call(K, Args, Count, Timed);
  OutputCapture::setLoopThread(false);
  if (Timed)
    K.Timing.add(Micros);
}

double KernelRunner::call(KernelInfo &K, const uint64_t *Args, size_t Count,
                          bool Timed) {
  std::chrono::steady_clock::time_point T0;
  if (Timed)
    T0 = std::chrono::steady_clock::now();
  uint64_t TraceFrom = Trace && Trace->on() ? steadyNowNs() : 0;
  setCurrentKernel(K.Name.c_str());
  callKernel(K.Entry, Args, Count);
  setCurrentKernel(nullptr);
  if (TraceFrom)
    Trace->kernel(K.Name, TraceFrom);
  if (OutputCapture *C = OutputCapture::active())
    C->afterKernel();
  if (!Timed)
    return 0;
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now() - T0)
      .count();
}

void KernelRunner::run() {
  {
    std::lock_guard<std::mutex> F(FollowM);
    LeaderActive = true;
  }
  threadMain(/*Original=*/true);
}

void KernelRunner::threadMain(bool Original) {
  bool Leader = Original;
  for (;;) {
    if (Leader)
      lead();
    std::unique_lock<std::mutex> F(FollowM);
    ++IdleFollowers;
    FollowCV.wait(F,
                  [&] { return Stopping || (LeaderWanted && !LeaderActive); });
    --IdleFollowers;
    if (Stopping)
      break;
    LeaderWanted = false;
    LeaderActive = true;
    Leader = true;
  }
  if (!Original)
    return;
  std::vector<std::thread> All;
  {
    std::lock_guard<std::mutex> F(FollowM);
    All.swap(Threads);
  }
  for (std::thread &T : All)
    T.join();
}

void KernelRunner::lead() {
  using Clock = std::chrono::steady_clock;
  auto LastActivity = Clock::now();
  unsigned Idle = 0;
  const auto Spin = std::chrono::microseconds(static_cast<long>(L.SpinMicros));
  for (;;) {
    if (L.StopRequested()) {
      std::lock_guard<std::mutex> F(FollowM);
      Stopping = true;
      LeaderActive = false;
      FollowCV.notify_all();
      return;
    }
    unsigned N = L.Poll();
    std::vector<std::function<void()>> Work;
    if (HavePosted.load(std::memory_order_acquire)) {
      std::lock_guard<std::mutex> G(PostM);
      Work.swap(Posted);
      HavePosted.store(false, std::memory_order_relaxed);
    }
    for (auto &Fn : Work)
      Fn();
    N += Work.size();
    if (!Ready.empty()) {
      KernelJob Job = Ready.pop();
      KernelTiming &Timing = Job.Kernel->Timing;
      if (isShort(*Job.Kernel)) {
        callShort(*Job.Kernel, Job.Args.data(), Job.Args.size());
        L.Done(Job);
        Idle = 0; // activity: the spin window starts again at the next poll
        continue;
      }
      // Others hand the loop to a follower first, so the session keeps
      // serving.
      {
        std::lock_guard<std::mutex> F(FollowM);
        LeaderActive = false;
        LeaderWanted = true;
        if (IdleFollowers == 0 && Threads.size() + 1 < kMaxThreads)
          Threads.emplace_back([this] { threadMain(false); });
        FollowCV.notify_one();
      }
      double Micros = call(*Job.Kernel, Job.Args.data(), Job.Args.size(),
                           /*Timed=*/true);
      std::unique_lock<std::mutex> F(FollowM);
      if (LeaderActive || Stopping) {
        F.unlock();
        // Another thread leads now: it records the timing and replies.
        post([this, &Timing, Micros, Job = std::move(Job)] {
          Timing.add(Micros);
          L.Done(Job);
        });
        return; // become a follower
      }
      // Nobody took over while the kernel ran: keep leading.
      LeaderWanted = false;
      LeaderActive = true;
      F.unlock();
      Timing.add(Micros);
      L.Done(Job);
      Idle = 0;
      continue;
    }
    if (N) {
      Idle = 0;
      continue;
    }
    // Read the clock only now and then while spinning, and let other
    // threads on this core (kernels of other sessions, the host program of
    // an emulated DPU) run between polls.
    if (Idle++ == 0)
      LastActivity = Clock::now();
    if (L.IdleHook && (Idle & 7) == 1)
      L.IdleHook();
    // A yield is a system call: paid on every poll it would delay the
    // answer to a message that arrives meanwhile. Every 64 polls (a few
    // microseconds) lets other threads in promptly enough; on cores shared
    // with other busy processes, every poll.
    if (L.SharedCores || (Idle & 63) == 0)
      sched_yield();
    if ((Idle & 31) || Clock::now() - LastActivity < Spin)
      continue;
    Idle = 0;
    // With an idle hook (MPI progress) sleep briefly, so that MPI transfers
    // that kernels posted keep moving between kernels.
    L.Sleep(L.IdleHook ? 10 : 100);
    if (L.IdleHook)
      L.IdleHook();
  }
}

} // namespace ompdpu::server
