// The plugin's device logic (DpuDevice) against a real server, driven the
// way libomptarget drives it, through its ABI-free API: queues, launches,
// events. For orders of
// operations libomptarget does not produce today but may, and for which a
// wrong answer would be silent.
#include "dpu_device.h"
#include "server_process.h"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <future>
#include <gtest/gtest.h>
#include <iterator>
#include <thread>

using namespace ompdpu;
using namespace ompdpu::plugin;

namespace {

class DeviceTest : public ::testing::Test {
protected:
  void SetUp() override {
    Server.start();
    ASSERT_FALSE(HasFatalFailure());
    ClientConfig Cfg = Server.config();
    Cfg.ConnectTimeout = 5;
    Cfg.ResponseTimeout = 10;
    Cfg.Trace.Summary = true; // counts the results taken with a launch
    auto C = client::Connection::open(Server.Addr, Cfg);
    ASSERT_TRUE(C) << C.status().message();
    Dev = std::make_unique<DpuDevice>(0, 1, std::move(*C));
    std::ifstream F(OMPDPU_TEST_IMAGE, std::ios::binary);
    Image.assign(std::istreambuf_iterator<char>(F), {});
    // What the host's copy of the fixture's entry table looks like.
    auto Entries = Dev->loadImage(Image.data(), Image.size(),
                                  {{"fixture_kernel", 0},
                                   {"fixture_global", 16},
                                   {"fixture_copy", 0},
                                   {"fixture_wait", 0}});
    ASSERT_TRUE(Entries) << Entries.status().message();
    ASSERT_FALSE((*Entries)[1].Kernel) << "a global";
    EXPECT_EQ((*Entries)[1].Size, 16u);
    Copy = (*Entries)[2].Kernel; // fixture_copy(dst, src)
    ASSERT_TRUE(Copy);
  }
  void TearDown() override {
    Dev.reset();
    Server.stop();
  }
  void *alloc8() {
    auto P = Dev->alloc(8, MemoryKind::Default);
    EXPECT_TRUE(P) << P.status().message();
    return P ? *P : nullptr;
  }
  /// One region as libomptarget issues it: the source's copy, the launch
  /// of fixture_copy(Dst, Src), Dst's retrieve, the synchronize. What came
  /// back in Dst.
  uint64_t copyRegion(void *Dst, void *Src, uint64_t Value) {
    AsyncQueue *Q = Dev->acquireQueue();
    uint64_t Back = ~0ull;
    EXPECT_TRUE(Dev->submit(Src, &Value, 8, Q).ok());
    uint64_t Args[] = {address(Dst), address(Src)};
    EXPECT_TRUE(Dev->launch(Copy, Args, 2, Q).ok());
    EXPECT_TRUE(Dev->retrieve(&Back, Dst, 8, Q).ok());
    EXPECT_TRUE(Dev->synchronize(Q).ok());
    return Back;
  }

  test::ServerProcess Server;
  std::unique_ptr<DpuDevice> Dev;
  std::vector<char> Image;
  KernelRecord *Copy = nullptr;
  static uint64_t address(const void *P) {
    return reinterpret_cast<uint64_t>(P);
  }
};

TEST_F(DeviceTest, ResultsAskedForWithTheLaunchAreTakenByItsRetrieve) {
  void *Dst = alloc8(), *Src = alloc8();
  ASSERT_TRUE(Dst && Src);
  for (uint64_t R = 0; R < 4; ++R)
    EXPECT_EQ(copyRegion(Dst, Src, 100 + R), 100 + R) << R;
  // The first region shows the plugin what follows the kernel, the second
  // that it stays the same; the next two ask for it.
  EXPECT_EQ(Dev->resultsTaken(), 2u);
  EXPECT_EQ(Dev->resultsMissed(), 0u);
}

// A result in a large block, not at its start: the pool vouches only for
// a large block's start, so the plugin cannot ask for it with the launch.
// The launch then waits to leave with the retrieve: one Batch per region
// once the first has shown that a result follows.
TEST_F(DeviceTest, AResultThePoolCannotVouchForTravelsWithItsLaunch) {
  auto Large = Dev->alloc(1 << 20, MemoryKind::Default);
  ASSERT_TRUE(Large) << Large.status().message();
  void *Src = alloc8();
  ASSERT_TRUE(Src);
  char *Dst = static_cast<char *>(*Large) + 8;
  for (uint64_t R = 0; R < 3; ++R)
    EXPECT_EQ(copyRegion(Dst, Src, 50 + R), 50 + R) << R;
  EXPECT_EQ(Dev->resultsTaken(), 0u);
  EXPECT_EQ(Dev->resultsMissed(), 0u);
  // The first region: its launch, then its result; then one each.
  EXPECT_EQ(Dev->connection().completed(protocol::MsgType::Batch), 4u);
}

// The result's bytes are read right after the kernel. Once anything but a
// retrieve follows the launch in its queue, they may be stale: here a copy
// to the result's own block. The retrieve must bring that copy's bytes.
TEST_F(DeviceTest, AnOperationAfterTheLaunchEndsItsResults) {
  void *Dst = alloc8(), *Src = alloc8();
  ASSERT_TRUE(Dst && Src);
  for (uint64_t R = 0; R < 3; ++R)
    ASSERT_EQ(copyRegion(Dst, Src, R), R);
  ASSERT_EQ(Dev->resultsTaken(), 1u);
  AsyncQueue *Q = Dev->acquireQueue();
  uint64_t Value = 7, Later = 9, Back = 0;
  ASSERT_TRUE(Dev->submit(Src, &Value, 8, Q).ok());
  uint64_t Args[] = {address(Dst), address(Src)};
  ASSERT_TRUE(Dev->launch(Copy, Args, 2, Q).ok());
  ASSERT_TRUE(Dev->submit(Dst, &Later, 8, Q).ok());
  ASSERT_TRUE(Dev->retrieve(&Back, Dst, 8, Q).ok());
  ASSERT_TRUE(Dev->synchronize(Q).ok());
  EXPECT_EQ(Back, 9u) << "the bytes from before the copy came back";
  EXPECT_EQ(Dev->resultsTaken(), 1u);
  EXPECT_EQ(Dev->resultsMissed(), 1u);
}

// libomptarget records a mapping's event again when it copies the data
// again (map(always)), possibly from another thread's queue. The first
// queue's batch leaving must not resolve it: it now waits for the second.
TEST_F(DeviceTest, AnEventRecordedAgainWaitsForItsLastQueue) {
  void *A = alloc8(), *B = alloc8();
  ASSERT_TRUE(A && B);
  Event *E = acquireEvent();
  uint64_t One = 1, Two = 2;
  AsyncQueue *First = Dev->acquireQueue(), *Second = Dev->acquireQueue();
  ASSERT_TRUE(Dev->submit(A, &One, 8, First).ok());
  ASSERT_TRUE(Dev->recordEvent(E, First).ok());
  ASSERT_TRUE(Dev->submit(B, &Two, 8, Second).ok());
  ASSERT_TRUE(Dev->recordEvent(E, Second).ok());
  ASSERT_TRUE(Dev->synchronize(First).ok());
  EXPECT_TRUE(E->pending()) << "resolved by the queue it left";
  ASSERT_TRUE(Dev->synchronize(Second).ok());
  EXPECT_FALSE(E->pending());
  EXPECT_TRUE(Dev->waitEvent(E, nullptr).ok());
  releaseEvent(E);
}

// libomptarget 19 waits for a mapping's event holding the lock of the whole
// mapping table, which the thread whose queue holds the copy needs for its
// next map: the waiter must not wait for that thread to send its batch.
TEST_F(DeviceTest, AWaiterSendsThePendingBatchOfTheEventsQueue) {
  void *A = alloc8();
  ASSERT_TRUE(A);
  Event *E = acquireEvent();
  uint64_t Value = 42;
  AsyncQueue *Q = Dev->acquireQueue();
  ASSERT_TRUE(Dev->submit(A, &Value, 8, Q).ok());
  ASSERT_TRUE(Dev->recordEvent(E, Q).ok());
  ASSERT_TRUE(E->pending());
  uint64_t Seen = 0;
  auto Waiter = std::async(std::launch::async, [&] {
    Status S = Dev->waitEvent(E, nullptr);
    if (S.ok())
      S = Dev->retrieve(&Seen, A, 8, nullptr);
    return S;
  });
  // The queue's thread goes on only after the waiter (the table's lock).
  bool Returned =
      Waiter.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  ASSERT_TRUE(Dev->synchronize(Q).ok());
  ASSERT_TRUE(Returned) << "the waiter waited for the queue's thread";
  Status S = Waiter.get();
  EXPECT_TRUE(S.ok()) << S.message();
  EXPECT_EQ(Seen, 42u) << "the waiter returned before the copy landed";
  EXPECT_FALSE(E->pending());
  releaseEvent(E);
}

} // namespace
