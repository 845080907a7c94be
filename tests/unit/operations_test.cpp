//===- operations_test.cpp - A session's requests, without a UCX peer -----===//
#include "server/operations.h"

#include "common/log.h"
#include "server/device_identity.h"
#include "server/reply_sender.h"
#include "transport/memory_worker.h"

#include <fstream>
#include <future>
#include <gtest/gtest.h>
#include <iterator>
#include <thread>
#include <utility>

using namespace ompdpu;
using namespace ompdpu::protocol;
using namespace ompdpu::server;
using transport::BulkData;
using transport::Peer;

namespace {

/// Records every answer instead of sending it.
struct Answers final : RequestFinisher {
  struct Answer {
    Header H;
    Reply Rep;
    std::vector<uint8_t> Data;
  };
  std::vector<Answer> All;
  std::vector<std::pair<uint32_t, uint32_t>> Landed;
  void complete(const Header &H, Peer, const Reply &Rep, const void *Data,
                size_t Len, std::shared_ptr<void>) override {
    const auto *P = static_cast<const uint8_t *>(Data);
    All.push_back({H, Rep, std::vector<uint8_t>(P, P + Len)});
  }
  void markLanded(uint32_t Queue, uint32_t Through) override {
    Landed.emplace_back(Queue, Through);
  }
  using RequestFinisher::complete;
};

/// A session's parts over the in-memory transport; the runner's loop (the
/// session's thread) runs on its own thread and everything else on it.
class OperationsTest : public ::testing::Test {
protected:
  transport::MemoryNetwork Net;
  std::unique_ptr<transport::MemoryWorker> Client = Net.create();
  std::unique_ptr<transport::MemoryWorker> Server = Net.create();
  Answers Finish;
  DeviceMemory Memory{1 << 20};
  KernelTable Kernels;
  std::atomic<bool> Stop{false};
  KernelRunner Runner{loop()};
  Operations Ops{{*Server, Finish, Memory, Kernels, Runner, /*Token=*/42}};
  std::vector<Request> Taken;
  Peer ToServer = nullptr;
  std::thread Loop;
  uint32_t NextId = 1;

  KernelRunner::Loop loop() {
    KernelRunner::Loop L;
    L.Poll = [this] { return Server->progress() + Client->progress(); };
    L.Done = [this](const KernelJob &J) { Ops.kernelDone(J); };
    L.StopRequested = [this] { return Stop.load(); };
    L.Sleep = [](int) { std::this_thread::yield(); };
    L.Wake = [] {};
    return L;
  }
  void SetUp() override {
    Server->setHandler(
        [this](const uint8_t *C, size_t L, const BulkData &D, Peer F) {
          Request R;
          EXPECT_TRUE(parseFrame(C, L, R.H, *std::make_unique<Reader>()).ok());
          R.From = F;
          R.Body.assign(C + kHeaderSize, C + L);
          R.Data = D;
          Taken.push_back(std::move(R));
          return D.Length != 0;
        });
    ToServer = *Client->connectToWorker(Server->address(), true);
    Loop = std::thread([this] { Runner.run(); });
  }
  void TearDown() override {
    Stop = true;
    Loop.join();
  }
  template <typename F> auto onLoop(F Fn) {
    std::promise<decltype(Fn())> P;
    auto Fut = P.get_future();
    Runner.post([&] { P.set_value(Fn()); });
    return Fut.get();
  }
  /// Send a request from the client, start it in the session and wait for
  /// its answer.
  template <typename Body>
  Answers::Answer request(MsgType Type, const Body &B, uint16_t Operand = 0,
                          std::vector<uint8_t> Data = {}) {
    return requestVia(Type, B, Operand, std::move(Data), /*FromPeer=*/false);
  }
  template <typename Body>
  Answers::Answer requestVia(MsgType Type, const Body &B, uint16_t Operand,
                             std::vector<uint8_t> Data, bool FromPeer) {
    size_t Before = onLoop([&] {
      Header H;
      H.Type = Type;
      H.RequestId = NextId++;
      H.Operand = Operand;
      Client->send(ToServer, frame(H, B), Data.data(), Data.size(), nullptr,
                   true);
      Server->progress();
      EXPECT_EQ(Taken.size(), 1u);
      Request R = std::move(Taken.back());
      Taken.clear();
      size_t Answered = Finish.All.size();
      if (FromPeer)
        Ops.peerSubmit(R);
      else
        Ops.start(R, /*FromIntake=*/true);
      return Answered;
    });
    auto Until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (onLoop([&] { return Finish.All.size(); }) == Before &&
           std::chrono::steady_clock::now() < Until)
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    return onLoop([&] {
      EXPECT_EQ(Finish.All.size(), Before + 1);
      return Finish.All.back();
    });
  }
  uint64_t alloc(uint64_t Size) {
    Alloc A;
    A.Size = Size;
    auto Ans = request(MsgType::Alloc, A);
    EXPECT_EQ(Ans.Rep.Code, kOk) << Ans.Rep.Message;
    return Ans.Rep.Value;
  }
};

TEST_F(OperationsTest, CopiesInAndOutEagerAndRendezvous) {
  for (size_t Size : {size_t(100), size_t(20000)}) {
    uint64_t Ptr = alloc(Size);
    std::vector<uint8_t> Bytes(Size);
    for (size_t I = 0; I < Size; ++I)
      Bytes[I] = static_cast<uint8_t>(I * 7 + Size);
    auto Sub = request(MsgType::Submit, Transfer{Ptr, Size}, 0, Bytes);
    EXPECT_EQ(Sub.Rep.Code, kOk) << Sub.Rep.Message;
    auto Back = request(MsgType::Retrieve, Transfer{Ptr, Size});
    EXPECT_EQ(Back.Rep.Code, kOk);
    EXPECT_EQ(Back.Data, Bytes);
    EXPECT_EQ(request(MsgType::Free, Free{Ptr}).Rep.Code, kOk);
    EXPECT_EQ(request(MsgType::Free, Free{Ptr}).Rep.Code, kErrNotFound);
  }
  EXPECT_EQ(onLoop([&] { return Server->heldBulk(); }), 0u);
}

TEST_F(OperationsTest, BadRangesAreRefusedAndTheirDataDropped) {
  uint64_t Ptr = alloc(64);
  std::vector<uint8_t> Bytes(65, 1);
  auto Over = request(MsgType::Submit, Transfer{Ptr, 65}, 0, Bytes);
  EXPECT_EQ(Over.Rep.Code, kErrInvalid);
  EXPECT_NE(Over.Rep.Message.find("submit rejected"), std::string::npos);
  auto Short = request(MsgType::Submit, Transfer{Ptr, 64}, 0, Bytes);
  EXPECT_EQ(Short.Rep.Code, kErrInvalid);
  EXPECT_NE(Short.Rep.Message.find("carries 65 bytes"), std::string::npos);
  EXPECT_EQ(request(MsgType::Retrieve, Transfer{Ptr + 8, 64}).Rep.Code,
            kErrInvalid);
  EXPECT_EQ(request(MsgType::Retrieve, Transfer{0x1000, 8}).Rep.Code,
            kErrInvalid);
  EXPECT_EQ(onLoop([&] { return Server->heldBulk(); }), 0u);
  Alloc TooMuch;
  TooMuch.Size = 2 << 20;
  EXPECT_EQ(request(MsgType::Alloc, TooMuch).Rep.Code, kErrNoMemory);
  // A body that does not decode.
  EXPECT_EQ(request(MsgType::Alloc, Free{Ptr}).Rep.Code, kErrInvalid);
}

TEST_F(OperationsTest, PeerSubmitsNeedTheSessionsToken) {
  uint64_t Ptr = alloc(8);
  std::vector<uint8_t> Word = {1, 2, 3, 4, 5, 6, 7, 8}, Zero(8, 0);
  request(MsgType::Submit, Transfer{Ptr, 8}, 0, Zero);
  PeerSubmit Wrong{/*Token=*/41, Ptr, 8};
  auto Refused = requestVia(MsgType::PeerSubmit, Wrong, 0, Word, true);
  EXPECT_EQ(Refused.Rep.Code, kErrNotFound);
  EXPECT_EQ(Refused.Rep.Message, "wrong session token in PeerSubmit");
  EXPECT_EQ(request(MsgType::Retrieve, Transfer{Ptr, 8}).Data, Zero);
  PeerSubmit Right{/*Token=*/42, Ptr, 8};
  EXPECT_EQ(requestVia(MsgType::PeerSubmit, Right, 0, Word, true).Rep.Code,
            kOk);
  EXPECT_EQ(request(MsgType::Retrieve, Transfer{Ptr, 8}).Data, Word);
  EXPECT_EQ(onLoop([&] { return Server->heldBulk(); }), 0u);
}

TEST_F(OperationsTest, ABatchIsCheckedWholeBeforeAnyByteMoves) {
  uint64_t In = alloc(16), Out = alloc(16);
  std::vector<uint8_t> Zero(16, 0), Ones(16, 1);
  request(MsgType::Submit, Transfer{In, 16}, 0, Zero);
  Piece InP{In, 16}, BadOut{Out + 8, 16};
  BatchRef B;
  B.In = &InP;
  B.NumIn = 1;
  B.Out = &BadOut;
  B.NumOut = 1;
  auto Ans = request(MsgType::Batch, B, 0, Ones);
  EXPECT_EQ(Ans.Rep.Code, kErrInvalid);
  EXPECT_NE(Ans.Rep.Message.find("retrieve rejected"), std::string::npos);
  EXPECT_EQ(request(MsgType::Retrieve, Transfer{In, 16}).Data, Zero);
  // Whole, it copies in and back in one answer.
  Piece GoodOut{In, 16};
  B.Out = &GoodOut;
  Ans = request(MsgType::Batch, B, 0, Ones);
  EXPECT_EQ(Ans.Rep.Code, kOk) << Ans.Rep.Message;
  EXPECT_EQ(Ans.Data, Ones);
  // A kernel handle that names nothing.
  EXPECT_EQ(request(MsgType::Batch, B, /*Operand=*/9, Ones).Rep.Code,
            kErrNotFound);
}

TEST_F(OperationsTest, ImagesLoadAndTheirKernelsRun) {
  std::ifstream F(OMPDPU_TEST_IMAGE, std::ios::binary);
  std::vector<uint8_t> Image((std::istreambuf_iterator<char>(F)), {});
  ASSERT_FALSE(Image.empty());
  EXPECT_EQ(request(MsgType::Run, protocol::Run{}, /*Operand=*/1).Rep.Code,
            kErrNotFound);
  auto Loaded = request(MsgType::LoadImage, LoadImage{Image.size()}, 0, Image);
  ASSERT_EQ(Loaded.Rep.Code, kOk) << Loaded.Rep.Message;
  std::vector<EntryInfo> Entries;
  ASSERT_TRUE(
      decodeEntries(Loaded.Data.data(), Loaded.Data.size(), Entries).ok());
  ASSERT_EQ(Entries.size(), 4u);
  uint16_t Copy = 0;
  for (const EntryInfo &E : Entries)
    if (E.Name == "fixture_copy")
      Copy = E.Kernel;
  ASSERT_NE(Copy, 0);
  uint64_t Src = alloc(8), Dst = alloc(8);
  std::vector<uint8_t> Word = {1, 2, 3, 4, 5, 6, 7, 8};
  request(MsgType::Submit, Transfer{Src, 8}, 0, Word);
  protocol::Run R;
  R.Args = {Dst, Src};
  EXPECT_EQ(request(MsgType::Run, R, Copy).Rep.Code, kOk);
  EXPECT_EQ(request(MsgType::Retrieve, Transfer{Dst, 8}).Data, Word);
  // An image whose announced size is not its data's.
  auto Bad = request(MsgType::LoadImage, LoadImage{Image.size() + 1}, 0, Image);
  EXPECT_EQ(Bad.Rep.Code, kErrLoad);
  std::vector<uint8_t> Junk(4096, 0x5a);
  EXPECT_EQ(
      request(MsgType::LoadImage, LoadImage{Junk.size()}, 0, Junk).Rep.Code,
      kErrLoad);
}

TEST_F(OperationsTest, ImagesTellKernelsTheirDeviceNumber) {
  std::ifstream F(OMPDPU_TEST_IMAGE, std::ios::binary);
  std::vector<uint8_t> Image((std::istreambuf_iterator<char>(F)), {});
  ASSERT_FALSE(Image.empty());
  auto Loaded =
      request(MsgType::LoadImage, LoadImage{Image.size(), 2, 3}, 0, Image);
  ASSERT_EQ(Loaded.Rep.Code, kOk) << Loaded.Rep.Message;
  EXPECT_EQ(deviceIdentity().Num, 2);
  EXPECT_EQ(deviceIdentity().Count, 3);
  // Numbers that name no device are refused and change nothing.
  const std::pair<int32_t, int32_t> NoDevice[] = {
      {3, 3}, {-1, 3}, {0, 0}, {0, -4}};
  for (auto [Num, Count] : NoDevice) {
    auto Bad = request(MsgType::LoadImage, LoadImage{Image.size(), Num, Count},
                       0, Image);
    EXPECT_EQ(Bad.Rep.Code, kErrLoad);
    EXPECT_EQ(
        Bad.Rep.Message,
        format("device number %d of %d devices is not a device", Num, Count));
  }
  EXPECT_EQ(deviceIdentity().Num, 2);
  EXPECT_EQ(deviceIdentity().Count, 3);
}

} // namespace
