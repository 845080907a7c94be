//===- session_channel_test.cpp - Supervisor <-> session messages ---------===//
#include "protocol/session_channel.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace ompdpu;
using namespace ompdpu::protocol;

namespace {

struct Channel : ::testing::Test {
  int Fds[2] = {-1, -1};
  void SetUp() override {
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, Fds), 0);
  }
  void TearDown() override {
    for (int Fd : Fds)
      if (Fd >= 0)
        close(Fd);
  }
  template <typename T> void send(MsgType Type, const T &Body) {
    Header H;
    H.Type = Type;
    ASSERT_TRUE(sendChannelFrame(Fds[0], frame(H, Body)).ok());
  }
};

TEST_F(Channel, SetupRoundTrips) {
  SessionSetup Out;
  Out.Token = 0x1234567890abcdefull;
  Out.MemoryLimit = 3ull << 30;
  Out.Cores = 7;
  Out.SpinMicros = 250;
  Out.SharedCores = 1;
  Out.SameHost = 1;
  Out.OutputFd = 4;
  Out.Transports = "sm,self";
  send(MsgType::SessionSetup, Out);
  SessionSetup In;
  ASSERT_TRUE(
      receiveChannelMessage(Fds[1], MsgType::SessionSetup, In, 1000).ok());
  EXPECT_EQ(In.Token, Out.Token);
  EXPECT_EQ(In.MemoryLimit, Out.MemoryLimit);
  EXPECT_EQ(In.Cores, 7u);
  EXPECT_EQ(In.SpinMicros, 250u);
  EXPECT_EQ(In.SharedCores, 1);
  EXPECT_EQ(In.SameHost, 1);
  EXPECT_EQ(In.OutputFd, 4);
  EXPECT_EQ(In.Transports, "sm,self");
}

TEST_F(Channel, WrongTypeNamesBoth) {
  SessionReady R;
  R.Address = {1, 2, 3};
  send(MsgType::SessionReady, R);
  SessionSetup In;
  Status S = receiveChannelMessage(Fds[1], MsgType::SessionSetup, In, 1000);
  ASSERT_FALSE(S.ok());
  EXPECT_NE(S.message().find("SessionReady where SessionSetup"),
            std::string::npos)
      << S.message();
}

TEST_F(Channel, EmptyAddressIsMalformed) {
  send(MsgType::SessionReady, SessionReady());
  SessionReady In;
  EXPECT_FALSE(
      receiveChannelMessage(Fds[1], MsgType::SessionReady, In, 1000).ok());
}

TEST_F(Channel, ReadyCarriesItsSharedMemoryFilesWithinBounds) {
  SessionReady Out;
  Out.Address = {9};
  Out.ShmFiles = {"/dev/shm/ucx_shm_posix_1f", "/dev/shm/ucx_shm_posix_2e"};
  send(MsgType::SessionReady, Out);
  SessionReady In;
  ASSERT_TRUE(
      receiveChannelMessage(Fds[1], MsgType::SessionReady, In, 1000).ok());
  EXPECT_EQ(In.ShmFiles, Out.ShmFiles);
  Out.ShmFiles.assign(kMaxShmFiles + 1, "/dev/shm/ucx_shm_posix_1");
  send(MsgType::SessionReady, Out);
  EXPECT_FALSE(
      receiveChannelMessage(Fds[1], MsgType::SessionReady, In, 1000).ok())
      << "more files than a session may name";
}

TEST_F(Channel, SilenceAndCloseAreErrors) {
  SessionReady In;
  Status S = receiveChannelMessage(Fds[1], MsgType::SessionReady, In, 20);
  ASSERT_FALSE(S.ok());
  EXPECT_NE(S.message().find("within 20 ms"), std::string::npos);
  close(Fds[0]);
  Fds[0] = -1;
  S = receiveChannelMessage(Fds[1], MsgType::SessionReady, In, 1000);
  ASSERT_FALSE(S.ok());
  EXPECT_NE(S.message().find("closed"), std::string::npos) << S.message();
}

TEST_F(Channel, CrashFrameMatchesTheEncoder) {
  static uint8_t Buf[kMaxChannelFrame];
  size_t Len = encodeCrashFrame(Buf, 11, "__omp_offloading_main_l12");
  Header H;
  H.Type = MsgType::SessionCrash;
  SessionCrash C;
  C.Signal = 11;
  C.Kernel = "__omp_offloading_main_l12";
  std::vector<uint8_t> Expected = frame(H, C);
  ASSERT_EQ(Len, Expected.size());
  EXPECT_EQ(std::vector<uint8_t>(Buf, Buf + Len), Expected);
}

TEST_F(Channel, RawOutputFrameMatchesTheEncoderAndIsCut) {
  static uint8_t Buf[kMaxChannelFrame];
  size_t Len = encodeRawOutputFrame(Buf, 2, "line-A\n", 7);
  Header H;
  H.Type = MsgType::SessionRawOutput;
  SessionRawOutput R{2, "line-A\n"};
  std::vector<uint8_t> Expected = frame(H, R);
  ASSERT_EQ(Len, Expected.size());
  EXPECT_EQ(std::vector<uint8_t>(Buf, Buf + Len), Expected);
  std::string Big(2 * kMaxChannelFrame, 'x');
  Len = encodeRawOutputFrame(Buf, 1, Big.data(), Big.size());
  EXPECT_EQ(Len, kMaxChannelFrame);
  Reader Rd;
  ASSERT_TRUE(parseFrame(Buf, Len, H, Rd).ok());
  SessionRawOutput Back;
  ASSERT_TRUE(decodeBody(Rd, Back).ok());
  EXPECT_EQ(Back.Bytes.size(), kMaxRawOutputBytes);
}

TEST_F(Channel, CrashFramesAreDrainedAndLongNamesCut) {
  static uint8_t Buf[kMaxChannelFrame];
  std::string Long(10000, 'k');
  size_t Len = encodeCrashFrame(Buf, 7, Long.c_str());
  EXPECT_EQ(Len, kMaxChannelFrame);
  ASSERT_EQ(::send(Fds[0], Buf, Len, 0), static_cast<ssize_t>(Len));
  Len = encodeCrashFrame(Buf, 6, nullptr);
  ASSERT_EQ(::send(Fds[0], Buf, Len, 0), static_cast<ssize_t>(Len));
  close(Fds[0]);
  Fds[0] = -1;
  bool Closed = false;
  std::vector<ChannelFrame> Frames = drainChannel(Fds[1], Closed);
  EXPECT_TRUE(Closed);
  ASSERT_EQ(Frames.size(), 2u);
  SessionCrash C;
  ASSERT_TRUE(decodeChannelFrame(Frames[0], C));
  EXPECT_EQ(C.Signal, 7);
  EXPECT_EQ(C.Kernel, std::string(kMaxChannelFrame - kHeaderSize - 8, 'k'));
  ASSERT_TRUE(decodeChannelFrame(Frames[1], C));
  EXPECT_EQ(C.Signal, 6);
  EXPECT_EQ(C.Kernel, "");
}

TEST(ReadyLine, RoundTripsAndRejectsNoise) {
  auto L = parseReadyLine(formatReadyLine({"127.0.0.1", 18515, 4242}));
  ASSERT_TRUE(static_cast<bool>(L)) << L.status().message();
  EXPECT_EQ(L->Host, "127.0.0.1");
  EXPECT_EQ(L->Port, 18515);
  EXPECT_EQ(L->Pid, 4242);
  EXPECT_EQ(L->address(), "127.0.0.1:18515");
  // An IPv6 host leaves in brackets, as OMPDPU_DEVICES needs it.
  EXPECT_EQ(formatReadyLine({"::1", 80, 7}),
            "{\"listening\":\"[::1]:80\",\"pid\":7}\n");
  EXPECT_EQ(parseReadyLine(R"({"listening":"[::1]:80","pid":7})")->address(),
            "[::1]:80");
  for (const char *Bad :
       {"", "LISTENING 127.0.0.1:80", R"({"listening":"h:80"})",
        R"({"listening":":80","pid":1})", R"({"listening":"h:0","pid":1})",
        R"({"listening":"h:70000","pid":1})", R"({"listening":"h:80","pid":0})",
        R"({"listening":"h:80x","pid":1})",
        "{\"listening\":\"h:80\",\"pid\":1}\ntrailing"})
    EXPECT_FALSE(static_cast<bool>(parseReadyLine(Bad))) << Bad;
}

} // namespace
