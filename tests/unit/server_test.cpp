// The server against bad input: a real ompdpu-server process, driven by the
// protocol client and by raw frames. Every bad request must get a clear
// error and leave the server serving.
#include "client/connection.h"
#include "common/log.h"
#include "protocol/messages.h"
#include "server_process.h"
#include "transport/transport.h"

#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <poll.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace ompdpu;
using namespace ompdpu::protocol;

namespace {

class ServerTest : public ::testing::Test {
protected:
  void SetUp() override {
    Server.start();
    Cfg = Server.config();
    Cfg.ConnectTimeout = 5;
    Cfg.ResponseTimeout = 10;
  }
  void TearDown() override { Server.stop(); }
  std::unique_ptr<client::Connection> connect() {
    auto C = client::Connection::open(Addr, Cfg);
    EXPECT_TRUE(C) << C.status().message();
    return C ? std::move(*C) : nullptr;
  }
  /// Load the fixture image into C's session; the handle of its kernel
  /// Name (0, after a failed expectation, if there is none).
  uint16_t loadKernel(client::Connection &C, const std::string &Name) {
    std::ifstream F(OMPDPU_TEST_IMAGE, std::ios::binary);
    std::vector<uint8_t> Img((std::istreambuf_iterator<char>(F)), {});
    client::Ticket L = C.loadImage(Img.data(), Img.size());
    EXPECT_TRUE(C.wait(L).ok()) << L->Result.message();
    std::vector<EntryInfo> Entries;
    EXPECT_TRUE(
        decodeEntries(L->Payload.data(), L->Payload.size(), Entries).ok());
    for (const EntryInfo &E : Entries)
      if (E.Name == Name)
        return E.Kernel;
    ADD_FAILURE() << "no kernel " << Name << " in the fixture image";
    return 0;
  }
  /// Device memory of Size bytes in C's session (0, after a failed
  /// expectation, when refused).
  uint64_t allocate(client::Connection &C, uint64_t Size) {
    client::Ticket A = C.alloc(Size, 0);
    EXPECT_TRUE(C.wait(A).ok()) << A->Result.message();
    return A->Result.ok() ? A->Value : 0;
  }
  /// True while the supervisor process still runs.
  bool serverAlive() { return waitpid(Pid, nullptr, WNOHANG) == 0; }

  test::ServerProcess Server;
  pid_t &Pid = Server.Pid;
  const DeviceAddress &Addr = Server.Addr;
  ClientConfig Cfg;
};

std::string errorOf(client::Connection &C, const client::Ticket &T) {
  Status S = C.wait(T);
  return S.ok() ? "" : S.message();
}

TEST_F(ServerTest, RoundTripSmallAndZeroCopySizes) {
  auto C = connect();
  ASSERT_TRUE(C);
  EXPECT_FALSE(C->info().Isa.empty());
  EXPECT_GE(C->info().Cores, 1u);
  EXPECT_EQ(C->info().Memory, 64u << 20);
  for (size_t Size : {size_t(1), size_t(100), size_t(8192), size_t(1 << 20),
                      size_t(9 << 20)}) {
    auto A = C->alloc(Size, 0);
    ASSERT_TRUE(C->wait(A).ok());
    std::vector<uint8_t> In(Size), Out(Size, 0);
    for (size_t K = 0; K < Size; ++K)
      In[K] = static_cast<uint8_t>(K * 131 + Size);
    ASSERT_EQ(errorOf(*C, C->submit(A->Value, In.data(), Size, 0, 0)), "");
    ASSERT_EQ(errorOf(*C, C->retrieve(Out.data(), A->Value, Size, 0, 0)), "");
    EXPECT_EQ(In, Out) << Size;
    EXPECT_EQ(errorOf(*C, C->free(A->Value)), "");
  }
}

TEST_F(ServerTest, OutOfRangeRequestsAreErrors) {
  auto C = connect();
  ASSERT_TRUE(C);
  auto A = C->alloc(64, 0);
  ASSERT_TRUE(C->wait(A).ok());
  std::vector<uint8_t> Buf(4096);
EXPECT : {
  std::string E = errorOf(*C, C->submit(A->Value, Buf.data(), 128, 0, 0));
  EXPECT_NE(E.find("runs past the end"), std::string::npos) << E;
  E = errorOf(*C, C->retrieve(Buf.data(), A->Value + 4096, 8, 0, 0));
  EXPECT_NE(E.find("not inside any live allocation"), std::string::npos) << E;
  E = errorOf(*C, C->retrieve(Buf.data(), 16, 8, 0, 0));
  EXPECT_NE(E.find("retrieve rejected"), std::string::npos) << E;
  E = errorOf(*C, C->free(A->Value + 8));
  EXPECT_NE(E.find("cannot free"), std::string::npos) << E;
  const uint64_t Two[] = {1, 2};
  E = errorOf(*C, C->run(999, Two, 2, 0, 0));
  EXPECT_NE(E.find("not a kernel"), std::string::npos) << E;
  E = errorOf(*C, C->run(0, nullptr, 0, 0, 0));
  EXPECT_NE(E.find("not a kernel"), std::string::npos) << E;
  // A frame too large to travel as the message's data (the small one above
  // does) arrives as its header.
  std::vector<uint64_t> Hundred(100, 1);
  E = errorOf(*C, C->run(999, Hundred.data(), Hundred.size(), 0, 0));
  EXPECT_NE(E.find("not a kernel"), std::string::npos) << E;
  E = errorOf(*C, C->alloc(1ull << 30, 0));
  EXPECT_NE(E.find("out of device memory"), std::string::npos) << E;
}
  // The session is still fine.
  EXPECT_EQ(errorOf(*C, C->submit(A->Value, Buf.data(), 64, 0, 0)), "");
  EXPECT_EQ(errorOf(*C, C->free(A->Value)), "");
  EXPECT_NE(errorOf(*C, C->free(A->Value)), "") << "double free";
}

TEST_F(ServerTest, CorruptImagesAreLoadErrors) {
  auto C = connect();
  ASSERT_TRUE(C);
  std::vector<uint8_t> Junk(5000, 0xab);
  std::string E = errorOf(*C, C->loadImage(Junk.data(), Junk.size()));
  EXPECT_NE(E.find("not an ELF file"), std::string::npos) << E;
  // A real shared object with its section table overwritten.
  std::ifstream F(OMPDPU_TEST_IMAGE, std::ios::binary);
  std::vector<uint8_t> Img((std::istreambuf_iterator<char>(F)), {});
  ASSERT_GT(Img.size(), 200u);
  for (size_t K = 64; K < Img.size(); K += 7)
    Img[K] ^= 0x5a;
  uint64_t BadOff = Img.size() * 4;
  std::memcpy(Img.data() + 0x28, &BadOff, 8);
  E = errorOf(*C, C->loadImage(Img.data(), Img.size()));
  EXPECT_NE(E, "");
  // Still serving.
  auto A = C->alloc(8, 0);
  EXPECT_TRUE(C->wait(A).ok());
}

// The session runs a short kernel straight from the message that asks for
// it once the kernel is in its queue's turn. A Run that arrives before the
// operations ahead of it (here a 64 KiB submit on the bulk endpoint, sent
// after it on purpose every other round) must still wait for them and see
// their data.
TEST_F(ServerTest, RunsWaitForTheOperationsAheadOfThem) {
  auto C = connect();
  ASSERT_TRUE(C);
  uint16_t Copy = loadKernel(*C, "fixture_copy");
  ASSERT_NE(Copy, 0);
  constexpr size_t Words = 8192;
  uint64_t Src = allocate(*C, Words * 8), Dst = allocate(*C, 8);
  ASSERT_TRUE(Src && Dst);
  const uint64_t Args[2] = {Dst, Src + (Words - 1) * 8};
  std::vector<uint64_t> Data(Words);
  uint32_t Seq = 0;
  for (uint64_t Round = 1; Round <= 24; ++Round) {
    std::fill(Data.begin(), Data.end(), Round);
    client::Ticket Submit, Run;
    if (Round % 2) {
      Run = C->run(Copy, Args, 2, 7, Seq + 1);
      Submit = C->submit(Src, Data.data(), Words * 8, 7, Seq);
    } else {
      Submit = C->submit(Src, Data.data(), Words * 8, 7, Seq);
      Run = C->run(Copy, Args, 2, 7, Seq + 1);
    }
    uint64_t Got = 0;
    client::Ticket Get = C->retrieve(&Got, Dst, 8, 7, Seq + 2);
    Seq += 3;
    ASSERT_TRUE(C->wait(Submit).ok()) << Submit->Result.message();
    ASSERT_TRUE(C->wait(Run).ok()) << Run->Result.message();
    ASSERT_TRUE(C->wait(Get).ok()) << Get->Result.message();
    EXPECT_EQ(Got, Round) << "round " << Round;
  }
}

// A Batch copies its in bytes to the device, runs its kernel and answers
// with its out bytes, in one request; a bad piece is refused before any
// byte is written, and the session keeps serving.
TEST_F(ServerTest, BatchCopiesInRunsAndAnswersWithTheOutBytes) {
  auto C = connect();
  ASSERT_TRUE(C);
  uint16_t Copy = loadKernel(*C, "fixture_copy");
  ASSERT_NE(Copy, 0);
  uint64_t S = allocate(*C, 64), D = allocate(*C, 8);
  ASSERT_TRUE(S && D);
  // In: 16 bytes at Src+0 and 8 at Src+40; the kernel copies Src+40 to Dst;
  // out: Dst, then Src+0's 16 bytes.
  std::vector<Piece> In = {{S, 16}, {S + 40, 8}}, Out = {{D, 8}, {S, 16}};
  uint64_t InBytes[3] = {0x1111, 0x2222, 0xabcdef};
  const uint64_t Args[2] = {D, S + 40};
  uint64_t Got = 0, Back[2] = {0, 0};
  auto Into = [&] {
    return std::vector<client::HostRange>{{&Got, 8}, {Back, 16}};
  };
  uint32_t Seq = 0;
  client::Ticket T =
      C->batch(In, InBytes, 24, Copy, Args, 2, Out, Into(), 5, Seq++);
  ASSERT_EQ(errorOf(*C, T), "");
  EXPECT_EQ(Got, 0xabcdefu);
  EXPECT_EQ(Back[0], 0x1111u);
  EXPECT_EQ(Back[1], 0x2222u);
  // Without a kernel: copies in and out only.
  InBytes[0] = 0x3333;
  T = C->batch({{S, 8}}, InBytes, 8, 0, nullptr, 0, {{S, 8}}, {{&Got, 8}}, 5,
               Seq++);
  ASSERT_EQ(errorOf(*C, T), "");
  EXPECT_EQ(Got, 0x3333u);
  // Refused, each with its reason; nothing is written.
  std::vector<Piece> PastEnd = {{S, 8}, {S + 60, 8}};
  EXPECT_NE(errorOf(*C, C->batch(PastEnd, InBytes, 16, 0, nullptr, 0, {}, {}, 5,
                                 Seq++))
                .find("submit rejected"),
            std::string::npos);
  EXPECT_NE(errorOf(*C, C->batch({}, nullptr, 0, Copy, Args, 2, {{D + 64, 8}},
                                 {{&Got, 8}}, 5, Seq++))
                .find("retrieve rejected"),
            std::string::npos);
  EXPECT_NE(errorOf(*C, C->batch({{S, 8}}, InBytes, 4, 0, nullptr, 0, {}, {}, 5,
                                 Seq++))
                .find("carries 4 bytes"),
            std::string::npos);
  EXPECT_NE(
      errorOf(*C, C->batch({}, nullptr, 0, 999, Args, 2, {}, {}, 5, Seq++))
          .find("not a kernel"),
      std::string::npos);
  EXPECT_NE(errorOf(*C, C->batch({}, nullptr, 0, 0, nullptr, 0,
                                 {{S, 8}, {S, 1ull << 21}}, {}, 5, Seq++))
                .find("at most"),
            std::string::npos);
  // Still serving, and the refused submit wrote nothing at Src.
  T = C->batch({}, nullptr, 0, 0, nullptr, 0, {{S, 8}}, {{&Got, 8}}, 5, Seq++);
  ASSERT_EQ(errorOf(*C, T), "");
  EXPECT_EQ(Got, 0x3333u);
}

// Landed answers once a Batch's bytes are in place while its kernel still
// runs (what an event recorded between them waits for), waits for an
// operation that has not arrived yet, and answers at once for one done.
TEST_F(ServerTest, LandedAnswersBeforeTheKernelEnds) {
  auto C = connect();
  ASSERT_TRUE(C);
  uint16_t Wait = loadKernel(*C, "fixture_wait");
  ASSERT_NE(Wait, 0);
  uint64_t Flag = allocate(*C, 8), Data = allocate(*C, 64);
  ASSERT_TRUE(Flag && Data);
  uint64_t Zero = 0, One = 1;
  ASSERT_EQ(errorOf(*C, C->submit(Flag, &Zero, 8, 0, 0)), "");
  using Clock = std::chrono::steady_clock;
  client::Ticket Early = C->landed(3, 0);
  EXPECT_FALSE(
      C->waitUntil(Early, Clock::now() + std::chrono::milliseconds(200)))
      << "answered before the operation was even sent";
  uint64_t Bytes[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  const uint64_t Arg = Flag;
  client::Ticket B =
      C->batch({{Data, 64}}, Bytes, 64, Wait, &Arg, 1, {}, {}, 3, 0);
  ASSERT_TRUE(C->waitUntil(Early, Clock::now() + std::chrono::seconds(5)));
  EXPECT_EQ(Early->Result.message(), "");
  EXPECT_FALSE(B->Done.load()) << "the kernel waits for its flag";
  uint64_t Back[8] = {};
  ASSERT_EQ(errorOf(*C, C->retrieve(Back, Data, 64, 0, 0)), "");
  EXPECT_EQ(std::memcmp(Back, Bytes, 64), 0) << "bytes in place";
  ASSERT_EQ(errorOf(*C, C->submit(Flag, &One, 8, 0, 0)), "");
  ASSERT_EQ(errorOf(*C, B), "");
  EXPECT_EQ(errorOf(*C, C->landed(3, 0)), "") << "done: answered at once";
  EXPECT_NE(errorOf(*C, C->landed(0, 0)).find("malformed Landed"),
            std::string::npos);
}

TEST_F(ServerTest, ProtocolVersionMismatchIsRefusedClearly) {
  auto W = transport::Worker::create();
  ASSERT_TRUE(W);
  auto P = (*W)->connect({Addr.Host, Addr.Port});
  ASSERT_TRUE(P);
  std::string Answer;
  (*W)->setHandler([&](const uint8_t *Ctrl, size_t Len,
                       const transport::BulkData &, transport::Peer) {
    Header H;
    Reader R;
    HelloReply Rep;
    if (parseFrame(Ctrl, Len, H, R).ok() && decodeBody(R, Rep).ok())
      Answer = format("%d %s", Rep.Code, Rep.Message.c_str());
    return false;
  });
  Header H;
  H.Type = MsgType::Hello;
  H.RequestId = 1;
  Hello Hi;
  Hi.MinVersion = 90;
  Hi.MaxVersion = 99;
  (*W)->send(*P, frame(H, Hi), nullptr, 0, nullptr);
  auto Deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (Answer.empty() && std::chrono::steady_clock::now() < Deadline)
    (*W)->progress();
  EXPECT_EQ(Answer, format("5 protocol version mismatch: client speaks 90-99, "
                           "server speaks %u",
                           unsigned(kVersion)));
  (*W)->closePeer(*P);
}

TEST_F(ServerTest, MalformedFramesLeaveTheServerServing) {
  {
    auto W = transport::Worker::create();
    ASSERT_TRUE(W);
    auto P = (*W)->connect({Addr.Host, Addr.Port});
    ASSERT_TRUE(P);
    int Replies = 0;
    (*W)->setHandler([&](const uint8_t *, size_t, const transport::BulkData &,
                         transport::Peer) {
      ++Replies;
      return false;
    });
    std::vector<std::vector<uint8_t>> Bad = {
        {1, 2, 3},
        std::vector<uint8_t>(32, 0),
        std::vector<uint8_t>(40, 0xff),
    };
    Header H;
    H.Type = MsgType::Hello;
    Hello Hi;
    std::vector<uint8_t> Truncated = frame(H, Hi);
    Truncated.resize(Truncated.size() - 3);
    Bad.push_back(Truncated);
    H.Type = MsgType::Run; // not a supervisor request
    Bad.push_back(frame(H, Empty()));
    // Each twice: with bulk data (the frame as the message's header) and
    // without (the frame as its data, under the small-frame id).
    auto Deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    for (auto &B : Bad) {
      (*W)->send(*P, B, "x", 1, nullptr);
      // trySend refuses while the endpoint is still being wired up.
      while (!(*W)->trySend(*P, B.data(), B.size(), nullptr, 0) &&
             std::chrono::steady_clock::now() < Deadline)
        (*W)->progress();
    }
    while (std::chrono::steady_clock::now() < Deadline && Replies < 4)
      (*W)->progress();
    EXPECT_GE(Replies, 4) << "requests with a valid header are answered";
    (*W)->closePeer(*P);
  }
  EXPECT_TRUE(serverAlive());
  auto C = connect();
  ASSERT_TRUE(C);
  auto A = C->alloc(16, 0);
  EXPECT_TRUE(C->wait(A).ok());
}

TEST(ServerLimits, ASilentConnectionIsDroppedAfterTheHandshakeTimeout) {
  test::ServerProcess Server;
  Server.start({"--handshake-timeout", "1"});
  auto W = transport::Worker::create();
  ASSERT_TRUE(W);
  transport::Peer Lost = nullptr;
  (*W)->setPeerErrorHandler(
      [&](transport::Peer P, const Status &) { Lost = P; });
  auto P = (*W)->connect({Server.Addr.Host, Server.Addr.Port});
  ASSERT_TRUE(P);
  auto T0 = std::chrono::steady_clock::now();
  while (!Lost &&
         std::chrono::steady_clock::now() - T0 < std::chrono::seconds(5))
    (*W)->progress();
  double Took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - T0)
          .count();
  EXPECT_EQ(Lost, *P) << "the server keeps a connection that said nothing";
  EXPECT_GT(Took, 0.8);
  // A client that says Hello in time is served.
  ClientConfig Cfg = Server.config();
  auto C = client::Connection::open(Server.Addr, Cfg);
  ASSERT_TRUE(C) << C.status().message();
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_TRUE((*C)->wait((*C)->alloc(16, 0)).ok());
}

TEST(ServerLimits, ClientsBeyondMaxSessionsGetATypedError) {
  test::ServerProcess Server;
  Server.start({"--max-sessions", "2"});
  ClientConfig Cfg = Server.config();
  auto A = client::Connection::open(Server.Addr, Cfg);
  auto B = client::Connection::open(Server.Addr, Cfg);
  ASSERT_TRUE(A && B);
  auto C = client::Connection::open(Server.Addr, Cfg);
  ASSERT_FALSE(C);
  EXPECT_EQ(C.status().code(), ErrorCode::Busy);
  EXPECT_EQ(C.status().message(),
            "server busy: it serves 2 sessions, at most 2 (--max-sessions)");
  A->reset(); // a session ends: room for another
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto D = client::Connection::open(Server.Addr, Cfg);
  EXPECT_TRUE(D) << D.status().message();
}

TEST(ServerLimits, AUserBeyondItsSessionsGetsATypedError) {
  test::ServerProcess Server;
  Server.start({"--max-sessions-per-user", "1"});
  ClientConfig Cfg = Server.config();
  auto A = client::Connection::open(Server.Addr, Cfg);
  ASSERT_TRUE(A) << A.status().message();
  auto B = client::Connection::open(Server.Addr, Cfg);
  ASSERT_FALSE(B);
  EXPECT_EQ(B.status().code(), ErrorCode::Busy);
  EXPECT_EQ(B.status().message(), "this user holds 1 sessions, at most 1 "
                                  "(--max-sessions-per-user)");
}

TEST(ServerLimits, AClientWithoutTheKeyGetsATypedError) {
  test::ServerProcess Server;
  Server.start();
  ClientConfig Cfg; // no key
  Cfg.Auth = "none";
  auto A = client::Connection::open(Server.Addr, Cfg);
  ASSERT_FALSE(A);
  EXPECT_EQ(A.status().code(), ErrorCode::Auth);
  // The server goes on serving those who hold it.
  EXPECT_TRUE(client::Connection::open(Server.Addr, Server.config()));
}

TEST_F(ServerTest, ManyClientsAndThreadsAtOnce) {
  std::vector<std::unique_ptr<client::Connection>> Conns;
  for (int K = 0; K < 3; ++K) {
    Conns.push_back(connect());
    ASSERT_TRUE(Conns.back());
  }
  std::vector<std::thread> Threads;
  std::atomic<int> Failures{0};
  for (int T = 0; T < 6; ++T)
    Threads.emplace_back([&, T] {
      client::Connection &C = *Conns[T % 3];
      for (int I = 0; I < 200; ++I) {
        uint64_t V = (uint64_t(T) << 32) | I, Back = 0;
        auto A = C.alloc(8, 0);
        Status S = C.wait(A);
        if (S.ok())
          S = C.wait(C.submit(A->Value, &V, 8, 0, 0));
        if (S.ok())
          S = C.wait(C.retrieve(&Back, A->Value, 8, 0, 0));
        if (S.ok() && Back != V)
          S = Status::error("read back a different value");
        if (S.ok())
          S = C.wait(C.free(A->Value));
        if (!S.ok()) {
          ++Failures;
          ADD_FAILURE() << "thread " << T << " iteration " << I << ": "
                        << S.message();
        }
      }
    });
  for (auto &T : Threads)
    T.join();
  EXPECT_EQ(Failures.load(), 0);
}

TEST_F(ServerTest, DeadServerIsReportedPromptly) {
  auto C = connect();
  ASSERT_TRUE(C);
  kill(Pid, SIGKILL);
  waitpid(Pid, nullptr, 0);
  Pid = -1;
  auto Start = std::chrono::steady_clock::now();
  Status S;
  for (int K = 0; K < 1000 && S.ok(); ++K)
    S = C->wait(C->ping());
  double Took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
          .count();
  ASSERT_FALSE(S.ok());
  EXPECT_NE(S.message().find("connection lost"), std::string::npos)
      << S.message();
  EXPECT_LT(Took, 5.0);
}

TEST_F(ServerTest, FrozenServerTimesOut) {
  Cfg.ResponseTimeout = 1.0;
  Cfg.HeartbeatInterval = 0.2;
  auto C = connect();
  ASSERT_TRUE(C);
  // Freeze the whole server (supervisor and sessions) without killing it.
  std::vector<pid_t> All = {Pid};
  std::ifstream Children(format("/proc/%d/task/%d/children", Pid, Pid));
  for (pid_t Child; Children >> Child;)
    All.push_back(Child);
  ASSERT_GE(All.size(), 2u) << "the session process is a child";
  for (pid_t P : All)
    kill(P, SIGSTOP);
  auto A = C->alloc(8, 0);
  Status S = C->wait(A);
  for (pid_t P : All)
    kill(P, SIGCONT);
  ASSERT_FALSE(S.ok());
  EXPECT_NE(S.message().find("not responding"), std::string::npos)
      << S.message();
}

} // namespace
