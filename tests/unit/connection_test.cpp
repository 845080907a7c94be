//===- connection_test.cpp - The protocol client, without a UCX peer ------===//
//
// A scripted server on the in-memory transport answers the client: the
// handshake, replies and their bytes, and the ways a server fails.
//
//===----------------------------------------------------------------------===//
#include "client/connection.h"
#include "client/waiting_thread.h"

#include "transport/memory_worker.h"

#include <atomic>
#include <gtest/gtest.h>
#include <thread>

using namespace ompdpu;
using namespace ompdpu::client;
using namespace ompdpu::protocol;
using transport::BulkData;
using transport::Peer;

namespace {

/// A supervisor and its session, on a thread of their own.
class FakeServer {
public:
  int32_t HelloCode = kOk;         ///< what the HelloReply says
  size_t RetrieveBytes = SIZE_MAX; ///< bytes a Retrieve is answered with
  std::atomic<bool> Silent{false}; ///< stop answering the session's requests
  /// How long a Retrieve's answer waits (on the server's loop, which keeps
  /// serving: a delay inside the handler would hold the network's lock).
  std::atomic<int> RetrieveDelayMs{0};
  std::atomic<int> Requests{0};

  explicit FakeServer(transport::MemoryNetwork &Net)
      : Net(Net), Sup(Net.create()), Ses(Net.create()) {
    Port = *Sup->listen({"127.0.0.1", 0}, [](Peer) {});
    Sup->setHandler([this](const uint8_t *C, size_t L, const BulkData &,
                           Peer From) { return onSupervisor(C, L, From); });
    Ses->setHandler([this](const uint8_t *C, size_t L, const BulkData &D,
                           Peer From) { return onSession(C, L, D, From); });
  }
  ~FakeServer() { stop(); }
  void start() {
    Thread = std::thread([this] {
      while (!Stop) {
        Sup->progress();
        Ses->progress();
        sendDelayed();
        std::this_thread::yield();
      }
    });
  }
  void stop() {
    Stop = true;
    if (Thread.joinable())
      Thread.join();
  }
  /// Tell the client, as a supervisor does, that its session died.
  void sessionExit(const std::string &Why) {
    SessionExit X;
    X.Signal = 11;
    X.Message = Why;
    Header H;
    H.Type = MsgType::SessionExit;
    Sup->send(Client, frame(H, X), nullptr, 0, nullptr, false);
  }
  /// The session process vanishes.
  void killSession() { Net.kill(Ses->address()); }
  DeviceAddress address() const { return {"127.0.0.1", Port}; }

private:
  void answer(transport::MemoryWorker &W, Peer To, const Header &Req,
              const Reply &R, const std::vector<uint8_t> &Data = {}) {
    Header H;
    H.Type = MsgType::Reply;
    H.RequestId = Req.RequestId;
    H.Queue = Req.Queue;
    H.Seq = Req.Seq;
    W.send(To, frame(H, R), Data.data(), Data.size(), nullptr, false);
  }
  bool onSupervisor(const uint8_t *C, size_t L, Peer From) {
    Header H;
    Reader Body;
    EXPECT_TRUE(parseFrame(C, L, H, Body).ok());
    if (H.Type == MsgType::Hello) {
      Client = From;
      HelloReply R;
      R.Code = HelloCode;
      R.Message = HelloCode == kErrIsa ? "this server runs aarch64" : "";
      R.Isa = "x86_64";
      R.Cores = 3;
      R.Memory = 1 << 20;
      R.Token = 1234;
      R.SessionAddress = Ses->address();
      R.Hostname = "fake";
      Header RH;
      RH.Type = MsgType::HelloReply;
      RH.RequestId = H.RequestId;
      Sup->send(From, frame(RH, R), nullptr, 0, nullptr, false);
    } else if ((H.Type == MsgType::Ping || H.Type == MsgType::Bye) &&
               H.RequestId) {
      answer(*Sup, From, H, Reply());
    }
    return false;
  }
  bool onSession(const uint8_t *C, size_t L, const BulkData &D, Peer From) {
    Header H;
    Reader Body;
    EXPECT_TRUE(parseFrame(C, L, H, Body).ok());
    ++Requests;
    if (H.RequestId == 0 || (Silent && H.Type != MsgType::Attach))
      return false; // heartbeats need no answer; a frozen server gives none
    Reply R;
    std::vector<uint8_t> Data;
    if (H.Type == MsgType::Attach) {
      Attach A;
      EXPECT_TRUE(decodeBody(Body, A).ok());
      EXPECT_EQ(A.Token, 1234u);
    } else if (H.Type == MsgType::Alloc) {
      R.Value = 0x10000;
    } else if (H.Type == MsgType::Retrieve) {
      Transfer T;
      EXPECT_TRUE(decodeBody(Body, T).ok());
      Data.resize(RetrieveBytes == SIZE_MAX ? T.Size : RetrieveBytes);
      for (size_t I = 0; I < Data.size(); ++I)
        Data[I] = static_cast<uint8_t>(I % 251);
      R.Value = Data.size();
    } else if (H.Type == MsgType::Free) {
      R.Code = kErrNotFound;
      R.Message = "no allocation at 0x1";
    }
    if (D.Length)
      Ses->release(D);
    if (H.Type == MsgType::Retrieve && RetrieveDelayMs > 0) {
      Delayed.push_back({std::chrono::steady_clock::now() +
                             std::chrono::milliseconds(RetrieveDelayMs),
                         From, H, R, Data});
      return D.Length != 0;
    }
    answer(*Ses, From, H, R, Data);
    return D.Length != 0;
  }
  struct DelayedAnswer {
    std::chrono::steady_clock::time_point Due;
    Peer To;
    Header Req;
    Reply R;
    std::vector<uint8_t> Data;
  };
  std::vector<DelayedAnswer> Delayed; ///< only the server's thread uses it
  void sendDelayed() {
    auto Now = std::chrono::steady_clock::now();
    for (auto It = Delayed.begin(); It != Delayed.end();)
      if (It->Due <= Now) {
        answer(*Ses, It->To, It->Req, It->R, It->Data);
        It = Delayed.erase(It);
      } else {
        ++It;
      }
  }
  transport::MemoryNetwork &Net;
  std::unique_ptr<transport::MemoryWorker> Sup, Ses;
  uint16_t Port = 0;
  Peer Client = nullptr;
  std::atomic<bool> Stop{false};
  std::thread Thread;
};

/// A worker whose sends fail, once Broken, the way UCX reports a send to a
/// server that was killed: at once, with the peer's reset, before (or
/// without) the endpoint's own error.
class ResetOnSendWorker final : public transport::Worker {
public:
  ResetOnSendWorker(std::unique_ptr<transport::Worker> Inner,
                    const std::atomic<bool> &Broken)
      : Inner(std::move(Inner)), Broken(Broken) {
    this->Inner->setHandler(
        [this](const uint8_t *C, size_t L, const BulkData &D, Peer From) {
          return Handler(C, L, D, From);
        });
    this->Inner->setPeerErrorHandler(
        [this](Peer P, const Status &S) { OnPeerError(P, S); });
  }
  Expected<uint16_t> listen(const transport::SockAddress &A,
                            std::function<void(Peer)> OnAccept) override {
    return Inner->listen(A, std::move(OnAccept));
  }
  Expected<Peer> connect(const transport::SockAddress &A) override {
    return Inner->connect(A);
  }
  Expected<Peer> connectToWorker(const std::vector<uint8_t> &A,
                                 bool Detect) override {
    return Inner->connectToWorker(A, Detect);
  }
  std::vector<uint8_t> address() const override { return Inner->address(); }
  void closePeer(Peer P) override { Inner->closePeer(P); }
  std::string describe(Peer P) const override { return Inner->describe(P); }
  bool trySend(Peer To, const void *C, size_t CL, const void *D, size_t L,
               bool NeedsAnswer) override {
    return !Broken && Inner->trySend(To, C, CL, D, L, NeedsAnswer);
  }
  void send(Peer To, const std::vector<uint8_t> &C, const void *D, size_t L,
            transport::Completion Done, bool NeedsAnswer) override {
    if (!Broken)
      return Inner->send(To, C, D, L, std::move(Done), NeedsAnswer);
    if (Done)
      Done(Status::error(ErrorCode::PeerLost,
                         "send failed: Connection reset by remote peer"));
  }
  void receive(const BulkData &D, void *Dst,
               transport::Completion Done) override {
    Inner->receive(D, Dst, std::move(Done));
  }
  void release(const BulkData &D) override { Inner->release(D); }
  unsigned progress() override { return Inner->progress(); }
  void wait(int TimeoutMs) override { Inner->wait(TimeoutMs); }
  void signal() override { Inner->signal(); }
  bool arm() override { return Inner->arm(); }
  int eventFd() const override { return Inner->eventFd(); }

private:
  std::unique_ptr<transport::Worker> Inner;
  const std::atomic<bool> &Broken;
};

class ConnectionTest : public ::testing::Test {
protected:
  transport::MemoryNetwork Net;
  FakeServer Server{Net};
  ClientConfig Cfg;
  Connection::WorkerFactory Make = [this](const std::string &) {
    return Expected<std::unique_ptr<transport::Worker>>(
        std::unique_ptr<transport::Worker>(Net.create()));
  };
  Expected<std::unique_ptr<Connection>> open(const std::string &Isa = "") {
    Server.start();
    return Connection::open(Server.address(), Cfg, Isa, Make);
  }
};

TEST_F(ConnectionTest, HandshakeAttachAndReplies) {
  auto C = open("x86_64");
  ASSERT_TRUE(static_cast<bool>(C)) << C.status().message();
  EXPECT_EQ((*C)->info().Cores, 3u);
  EXPECT_EQ((*C)->info().Hostname, "fake");
  Ticket A = (*C)->alloc(64, 0);
  ASSERT_TRUE((*C)->wait(A).ok());
  EXPECT_EQ(A->Value, 0x10000u);
  Ticket F = (*C)->free(1);
  Status S = (*C)->wait(F);
  EXPECT_EQ(S.code(), ErrorCode::NotFound);
  EXPECT_EQ(S.message(), "no allocation at 0x1");
  EXPECT_TRUE((*C)->alive()); // an error reply is not a failed connection
}

TEST_F(ConnectionTest, AServerOfAnotherIsaIsATypedError) {
  Server.HelloCode = kErrIsa;
  auto C = open("aarch64");
  ASSERT_FALSE(static_cast<bool>(C));
  EXPECT_EQ(C.status().code(), ErrorCode::OtherIsa);
  EXPECT_EQ(C.status().message(), "this server runs aarch64");
}

TEST_F(ConnectionTest, ReplyBytesLandEagerAndRendezvous) {
  auto C = open();
  ASSERT_TRUE(static_cast<bool>(C)) << C.status().message();
  for (size_t Size : {size_t(64), size_t(50000)}) {
    std::vector<uint8_t> Dst(Size, 0xee);
    Ticket T = (*C)->retrieve(Dst.data(), 0x10000, Size, 0, 0);
    ASSERT_TRUE((*C)->wait(T).ok()) << T->Result.message();
    for (size_t I = 0; I < Size; ++I)
      ASSERT_EQ(Dst[I], I % 251) << "at " << I << " of " << Size;
  }
}

TEST_F(ConnectionTest, AReplyOfTheWrongSizeIsAnErrorNotAStrayWrite) {
  Server.RetrieveBytes = 8;
  auto C = open();
  ASSERT_TRUE(static_cast<bool>(C)) << C.status().message();
  std::vector<uint8_t> Dst(16, 0xee);
  Ticket T = (*C)->retrieve(Dst.data(), 0x10000, 16, 0, 0);
  Status S = (*C)->wait(T);
  ASSERT_FALSE(S.ok());
  EXPECT_EQ(S.message(), "retrieve of 16 bytes answered with 8");
  EXPECT_EQ(Dst, std::vector<uint8_t>(16, 0xee));
}

TEST_F(ConnectionTest, TheSupervisorsWordEndsTheConnection) {
  auto C = open();
  ASSERT_TRUE(static_cast<bool>(C)) << C.status().message();
  Server.Silent = true;
  Ticket T = (*C)->alloc(8, 0);
  Server.sessionExit("session process died: SIGSEGV while running kernel k");
  Status S = (*C)->wait(T);
  EXPECT_EQ(S.message(),
            "session process died: SIGSEGV while running kernel k");
  EXPECT_FALSE((*C)->alive());
  // Later requests fail at once, with the same reason.
  EXPECT_EQ((*C)->wait((*C)->alloc(8, 0)).message(), S.message());
}

TEST_F(ConnectionTest, ALostSessionFailsItsRequests) {
  Cfg.ResponseTimeout = 2;
  auto C = open();
  ASSERT_TRUE(static_cast<bool>(C)) << C.status().message();
  Server.Silent = true;
  Ticket T = (*C)->alloc(8, 0);
  Server.killSession();
  auto T0 = std::chrono::steady_clock::now();
  Status S = (*C)->wait(T);
  EXPECT_FALSE(S.ok());
  EXPECT_LT(std::chrono::steady_clock::now() - T0, std::chrono::seconds(5));
  EXPECT_FALSE((*C)->alive());
}

TEST_F(ConnectionTest, ASendThatFindsThePeerResetIsALostConnection) {
  Cfg.ResponseTimeout = 1; // how long a live supervisor may take to explain
  std::atomic<bool> Broken{false};
  Make = [this, &Broken](const std::string &) {
    return Expected<std::unique_ptr<transport::Worker>>(
        std::make_unique<ResetOnSendWorker>(Net.create(), Broken));
  };
  auto C = open();
  ASSERT_TRUE(static_cast<bool>(C)) << C.status().message();
  Broken = true;
  auto T0 = std::chrono::steady_clock::now();
  Status S = (*C)->wait((*C)->alloc(8, 0));
  EXPECT_LT(std::chrono::steady_clock::now() - T0, std::chrono::seconds(5));
  EXPECT_EQ(S.code(), ErrorCode::PeerLost);
  EXPECT_EQ(S.message().rfind("connection lost: the server stopped answering "
                              "(send failed: Connection reset by remote peer)",
                              0),
            0u)
      << S.message();
  EXPECT_FALSE((*C)->alive());
}

TEST_F(ConnectionTest, ASilentServerIsDeclaredDead) {
  Cfg.ResponseTimeout = 0.5;
  Cfg.HeartbeatInterval = 0.1;
  auto C = open();
  ASSERT_TRUE(static_cast<bool>(C)) << C.status().message();
  Server.Silent = true;
  Server.stop(); // the supervisor does not answer pings either
  Status S = (*C)->wait((*C)->alloc(8, 0));
  ASSERT_FALSE(S.ok());
  EXPECT_EQ(S.message(), "server not responding for 0.5 s (OMPDPU_TIMEOUT)");
}

/// The time slices of a thread that waits for a retrieve on asynchronous
/// queue 1 (or none) which the server answers after 30 ms: before and after
/// the wait, and of a thread it creates after the wait.
struct SlicesAround {
  int64_t Before = -1, After = -1, Child = -1;
};

class WakeSliceTest : public ConnectionTest {
protected:
  /// The slices around a slow reply, with OMPDPU_WAKE_SLICE_US = Micros.
  SlicesAround aroundASlowReply(double Micros, uint16_t Queue = 1) {
    Cfg.SpinMicros = 0;
    Cfg.WakeSliceMicros = Micros;
    auto C = open();
    EXPECT_TRUE(static_cast<bool>(C)) << C.status().message();
    SlicesAround S;
    if (!C)
      return S;
    Server.RetrieveDelayMs = 30;
    std::thread([&] {
      S.Before = currentSliceNanos();
      std::vector<uint8_t> Dst(64);
      EXPECT_TRUE(
          (*C)->wait((*C)->retrieve(Dst.data(), 0x10000, 64, Queue, 0)).ok());
      S.After = currentSliceNanos();
      std::thread([&] { S.Child = currentSliceNanos(); }).join();
    }).join();
    return S;
  }
};

TEST_F(WakeSliceTest, AThreadThatSleptForAReplyHasAShortSlice) {
  auto S = aroundASlowReply(200);
  if (S.Before <= 0)
    GTEST_SKIP() << "the kernel reports no time slices (Linux < 6.12)";
  EXPECT_NE(S.Before, 200000);
  EXPECT_EQ(S.After, 200000);
  EXPECT_NE(S.Child, 200000); // threads it creates start with the default
}

TEST_F(WakeSliceTest, ZeroLeavesTheThreadAlone) {
  auto S = aroundASlowReply(0);
  EXPECT_EQ(S.After, S.Before);
}

TEST_F(WakeSliceTest, ASynchronousWaitLeavesTheThreadAlone) {
  auto S = aroundASlowReply(200, 0);
  EXPECT_EQ(S.After, S.Before);
}

} // namespace
