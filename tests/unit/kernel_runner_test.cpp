//===- kernel_runner_test.cpp - Where and when kernels run ----------------===//
#include "server/kernel_runner.h"

#include <atomic>
#include <chrono>
#include <future>
#include <gtest/gtest.h>
#include <thread>

using namespace ompdpu::server;

namespace {

std::atomic<int> Calls{0};
// Kernels take pointers, as outlined target regions do.
void countCall(void *) { ++Calls; }

std::atomic<bool> Release{false};
std::atomic<bool> TimedOut{false};
/// Runs until Release is set (bounded: a runner that blocked its loop
/// must fail the test, not hang it).
void waitForRelease(void *) {
  auto Until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!Release.load())
    if (std::chrono::steady_clock::now() > Until) {
      TimedOut = true;
      return;
    }
}

/// A runner whose loop runs on its own thread, as a session's does.
struct RunnerLoop {
  std::atomic<bool> Stop{false};
  std::atomic<int> Polls{0};
  std::vector<std::pair<KernelJob, std::thread::id>> Done;
  KernelRunner Runner{loop()};
  std::thread Thread;
  RunnerLoop() {
    Thread = std::thread([this] { Runner.run(); });
  }
  ~RunnerLoop() {
    Stop = true;
    Thread.join();
  }
  KernelRunner::Loop loop() {
    KernelRunner::Loop L;
    L.Poll = [this] {
      ++Polls;
      return 0u;
    };
    L.Done = [this](const KernelJob &J) {
      Done.emplace_back(J, std::this_thread::get_id());
    };
    L.StopRequested = [this] { return Stop.load(); };
    L.Sleep = [](int Ms) {
      std::this_thread::sleep_for(std::chrono::milliseconds(Ms > 1 ? 1 : Ms));
    };
    L.Wake = [] {};
    L.SpinMicros = 100;
    return L;
  }
  /// Run F on the loop thread and wait for it.
  template <typename F> auto onLoop(F Fn) {
    std::promise<decltype(Fn())> P;
    auto Fut = P.get_future();
    Runner.post([&] { P.set_value(Fn()); });
    return Fut.get();
  }
  size_t done() {
    return onLoop([this] { return Done.size(); });
  }
};

KernelJob jobFor(KernelInfo &K, uint64_t Arg = 0) {
  KernelJob J;
  J.Kernel = &K;
  J.Args = {Arg};
  return J;
}

void waitFor(const std::function<bool()> &Cond) {
  auto Until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!Cond() && std::chrono::steady_clock::now() < Until)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

TEST(KernelRunner, KernelsTurnShortAndThenRunWhereTheyStart) {
  RunnerLoop L;
  KernelInfo K{reinterpret_cast<uint64_t>(&countCall), "count", {}};
  Calls = 0;
  // Unknown kernels go through the ready queue and are timed.
  for (int I = 0; I < 2; ++I) {
    L.onLoop([&] {
      L.Runner.start(jobFor(K), /*MayRunHere=*/true);
      return 0;
    });
    waitFor([&] { return L.done() == size_t(I + 1); });
  }
  ASSERT_EQ(L.done(), 2u);
  EXPECT_EQ(Calls, 2);
  EXPECT_TRUE(L.onLoop([&] { return L.Runner.isShort(K); }));
  // Now known to be short: it runs and is answered inside start().
  size_t Answered = L.onLoop([&] {
    L.Runner.start(jobFor(K), /*MayRunHere=*/true);
    return L.Done.size();
  });
  EXPECT_EQ(Answered, 3u);
  EXPECT_EQ(Calls, 3);
  // Not where a finished operation starts it: it waits for the loop.
  Answered = L.onLoop([&] {
    L.Runner.start(jobFor(K), /*MayRunHere=*/false);
    return L.Done.size();
  });
  EXPECT_EQ(Answered, 3u);
  waitFor([&] { return L.done() == 4u; });
  EXPECT_EQ(L.done(), 4u);
  // The fast path runs only short kernels.
  KernelInfo Fresh{reinterpret_cast<uint64_t>(&countCall), "fresh", {}};
  uint64_t Arg = 0;
  EXPECT_FALSE(L.onLoop([&] { return L.Runner.runShortNow(Fresh, &Arg, 1); }));
  EXPECT_TRUE(L.onLoop([&] { return L.Runner.runShortNow(K, &Arg, 1); }));
  EXPECT_EQ(Calls, 5);
}

TEST(KernelRunner, TheLoopKeepsServingWhileALongKernelRuns) {
  RunnerLoop L;
  Release = false;
  TimedOut = false;
  KernelInfo K{reinterpret_cast<uint64_t>(&waitForRelease), "wait", {}};
  L.onLoop([&] {
    L.Runner.start(jobFor(K), true);
    return 0;
  });
  // The kernel holds one thread; a follower must now run the loop.
  int Before = L.Polls;
  waitFor([&] { return L.Polls > Before + 100; });
  EXPECT_GT(L.Polls, Before + 100);
  L.onLoop([&] {
    Release = true;
    return 0;
  });
  waitFor([&] { return L.done() == 1u; });
  ASSERT_EQ(L.done(), 1u);
  EXPECT_FALSE(TimedOut);
  EXPECT_GE(L.Runner.followers(), 1u);
  // Answered on whichever thread leads, never on a thread that is not.
  EXPECT_EQ(L.Done[0].first.Kernel, &K);
}

TEST(KernelRunner, PostedWorkRunsOnTheLoopInOrder) {
  RunnerLoop L;
  std::vector<int> Order;
  std::thread::id LoopThread =
      L.onLoop([] { return std::this_thread::get_id(); });
  std::atomic<int> Left{100};
  std::vector<std::thread> Posters;
  std::atomic<bool> OffLoop{false};
  for (int T = 0; T < 2; ++T)
    Posters.emplace_back([&, T] {
      for (int I = 0; I < 50; ++I)
        L.Runner.post([&, T, I] {
          if (std::this_thread::get_id() != LoopThread)
            OffLoop = true;
          if (T == 0)
            Order.push_back(I);
          --Left;
        });
    });
  for (auto &P : Posters)
    P.join();
  waitFor([&] { return Left == 0; });
  EXPECT_EQ(Left, 0);
  EXPECT_FALSE(OffLoop);
  std::vector<int> Expected(50);
  for (int I = 0; I < 50; ++I)
    Expected[I] = I;
  EXPECT_EQ(L.onLoop([&] { return Order; }), Expected);
}

} // namespace
