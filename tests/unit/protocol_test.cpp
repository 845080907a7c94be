// Protocol frames: encode/decode round trips and rejection of bad input.
#include "protocol/messages.h"

#include <gtest/gtest.h>

using namespace ompdpu::protocol;

namespace {

template <typename Body> Body roundTrip(MsgType T, const Body &In, Header &H) {
  Header Out;
  Out.Type = T;
  Out.RequestId = 0x11223344u;
  Out.Queue = 7;
  Out.Operand = 0x1234;
  Out.Seq = 42;
  std::vector<uint8_t> F = frame(Out, In);
  Reader R;
  EXPECT_TRUE(parseFrame(F.data(), F.size(), H, R).ok());
  Body Back;
  EXPECT_TRUE(decodeBody(R, Back).ok());
  return Back;
}

TEST(Protocol, HeaderFieldsSurvive) {
  Header H;
  Transfer T;
  T.DevicePtr = 0xdeadbeef000;
  T.Size = 1 << 30;
  Transfer B = roundTrip(MsgType::Submit, T, H);
  EXPECT_EQ(H.Type, MsgType::Submit);
  EXPECT_EQ(H.RequestId, 0x11223344u);
  EXPECT_EQ(H.Queue, 7u);
  EXPECT_EQ(H.Operand, 0x1234u);
  EXPECT_EQ(H.Seq, 42u);
  EXPECT_EQ(B.DevicePtr, T.DevicePtr);
  EXPECT_EQ(B.Size, T.Size);
}

TEST(Protocol, HelloAndReplyRoundTrip) {
  Header H;
  Hello Hi;
  Hi.ClientName = "host pid 1";
  Hi.Isa = "aarch64";
  Hello B = roundTrip(MsgType::Hello, Hi, H);
  EXPECT_EQ(B.ClientName, Hi.ClientName);
  EXPECT_EQ(B.Isa, "aarch64");
  HelloReply R;
  R.Isa = "x86_64";
  R.Cores = 8;
  R.Memory = 16ull << 30;
  R.Token = 99;
  R.SessionAddress = {1, 2, 3, 250};
  R.Hostname = "dpu0";
  HelloReply RB = roundTrip(MsgType::HelloReply, R, H);
  EXPECT_EQ(RB.Isa, R.Isa);
  EXPECT_EQ(RB.Cores, 8u);
  EXPECT_EQ(RB.Memory, R.Memory);
  EXPECT_EQ(RB.Token, 99u);
  EXPECT_EQ(RB.SessionAddress, R.SessionAddress);
  EXPECT_EQ(RB.Hostname, "dpu0");
}

TEST(Protocol, RunCarriesArguments) {
  Header H;
  struct Run R;
  R.Args = {1, 2, 0xffffffffffffffffull};
  struct Run B = roundTrip(MsgType::Run, R, H);
  EXPECT_EQ(B.Args, R.Args);
  // The client encodes a Run straight from the caller's arguments: the
  // same bytes.
  H.Type = MsgType::Run;
  EXPECT_EQ(frame(H, RunArgs{R.Args.data(), R.Args.size()}), frame(H, R));
}

TEST(Protocol, BatchCarriesArgumentsAndPieces) {
  const uint64_t Args[] = {10, 0xffffffffffffffffull};
  const Piece In[] = {{0x1000, 64}, {0x2000, 8}};
  const Piece Out[] = {{0x3000, 4}};
  Header H;
  H.Type = MsgType::Batch;
  H.Operand = 3;
  std::vector<uint8_t> F = frame(H, BatchRef{Args, 2, In, 2, Out, 1});
  // Counts, arguments and pieces: 3*4 + 2*8 + 3*16 bytes.
  EXPECT_EQ(F.size(), kHeaderSize + 12 + 16 + 48);
  Header Back;
  Reader R;
  ASSERT_TRUE(parseFrame(F.data(), F.size(), Back, R).ok());
  EXPECT_EQ(Back.Operand, 3);
  BatchView B;
  ASSERT_TRUE(decodeBody(R, B).ok());
  ASSERT_EQ(B.numArgs(), 2u);
  EXPECT_EQ(B.arg(1), Args[1]);
  ASSERT_EQ(B.numIn(), 2u);
  EXPECT_EQ(B.in(1).DevicePtr, 0x2000u);
  EXPECT_EQ(B.inBytes(), 72u);
  ASSERT_EQ(B.numOut(), 1u);
  EXPECT_EQ(B.out(0).Size, 4u);
  EXPECT_EQ(B.outBytes(), 4u);
}

TEST(Protocol, BatchOfWrongShapeIsRejected) {
  const Piece Huge[] = {{0x1000, ~0ull}, {0x2000, 2}};
  Header H;
  H.Type = MsgType::Batch;
  std::vector<uint8_t> F = frame(H, BatchRef{nullptr, 0, Huge, 2, nullptr, 0});
  Header Back;
  Reader R;
  ASSERT_TRUE(parseFrame(F.data(), F.size(), Back, R).ok());
  BatchView B;
  ASSERT_TRUE(decodeBody(R, B).ok());
  EXPECT_EQ(B.inBytes(), ~0ull) << "an overflowing total matches no data";
  // Each truncation, and one byte too many, is refused.
  for (size_t Cut = kHeaderSize; Cut <= F.size() + 1; ++Cut) {
    std::vector<uint8_t> G(F.begin(), F.begin() + std::min(Cut, F.size()));
    if (Cut > F.size())
      G.push_back(0);
    ASSERT_TRUE(parseFrame(G.data(), G.size(), Back, R).ok());
    BatchView V;
    EXPECT_EQ(decodeBody(R, V).ok(), Cut == F.size()) << Cut;
  }
  // A count far beyond the body.
  Writer W;
  W.put<uint32_t>(0);
  W.put<uint32_t>(0x10000000);
  Reader RC(W.bytes().data(), W.bytes().size());
  BatchView V;
  EXPECT_FALSE(decodeBody(RC, V).ok());
}

TEST(Protocol, ReusedFrameBuffersHoldExactlyTheLastFrame) {
  // frameInto writes into storage sized ahead of what it writes: a short
  // frame after a long one must not keep the long one's tail.
  Header H;
  H.Type = MsgType::Run;
  struct Run Long;
  Long.Args.assign(20, 7);
  std::vector<uint8_t> Buf;
  frameInto(Buf, H, Long);
  EXPECT_EQ(Buf, frame(H, Long));
  Reply Short;
  Short.Value = 42;
  H.Type = MsgType::Reply;
  frameInto(Buf, H, Short);
  EXPECT_EQ(Buf, frame(H, Short));
  EXPECT_EQ(Buf.size(), kHeaderSize + 8);
  frameInto(Buf, H, Long);
  H.Type = MsgType::Run;
  frameInto(Buf, H, Long);
  EXPECT_EQ(Buf, frame(H, Long));
}

TEST(Protocol, RunWithoutArgumentsIsTheHeaderAlone) {
  // One cache line of UCX's shared-memory FIFO with UCX's own headers.
  Header H;
  H.Type = MsgType::Run;
  H.Operand = 0xfffe; // the kernel handle
  H.Queue = 0xffff;
  std::vector<uint8_t> F = frame(H, ompdpu::protocol::Run());
  EXPECT_EQ(F.size(), kHeaderSize);
  Header Back;
  Reader R;
  ASSERT_TRUE(parseFrame(F.data(), F.size(), Back, R).ok());
  EXPECT_EQ(Back.Operand, 0xfffe);
  EXPECT_EQ(Back.Queue, 0xffff);
  struct Run B;
  EXPECT_TRUE(decodeBody(R, B).ok());
  EXPECT_TRUE(B.Args.empty());
  // A body that is not whole arguments is malformed.
  std::vector<uint8_t> Odd = F;
  Odd.insert(Odd.end(), {1, 2, 3});
  ASSERT_TRUE(parseFrame(Odd.data(), Odd.size(), Back, R).ok());
  EXPECT_FALSE(decodeBody(R, B).ok());
}

TEST(Protocol, ReplyAndExchangeRoundTrip) {
  Header H;
  Reply R;
  R.Code = kErrNoMemory;
  R.Value = 5;
  R.Message = "out of device memory";
  Reply B = roundTrip(MsgType::Reply, R, H);
  EXPECT_EQ(B.Code, kErrNoMemory);
  EXPECT_EQ(B.Message, R.Message);
  ExchangeOut X;
  X.SrcPtr = 1;
  X.Size = 2;
  X.DstPtr = 3;
  X.DstToken = 4;
  X.PeerAddress = {9, 9};
  ExchangeOut XB = roundTrip(MsgType::ExchangeOut, X, H);
  EXPECT_EQ(XB.PeerAddress, X.PeerAddress);
  EXPECT_EQ(XB.DstToken, 4u);
}

TEST(Protocol, EntryTableRoundTrip) {
  std::vector<EntryInfo> In = {{0x1000, 0, 0, 1, "__omp_offloading_kernel"},
                               {0x2000, 64, 0, 0, "global_array"}};
  std::vector<uint8_t> Bytes = encodeEntries(In);
  std::vector<EntryInfo> Out;
  ASSERT_TRUE(decodeEntries(Bytes.data(), Bytes.size(), Out).ok());
  ASSERT_EQ(Out.size(), 2u);
  EXPECT_EQ(Out[0].Kernel, 1u);
  EXPECT_EQ(Out[1].Name, "global_array");
  EXPECT_EQ(Out[1].Size, 64u);
  EXPECT_EQ(Out[1].Kernel, 0u);
  Bytes.pop_back();
  EXPECT_FALSE(decodeEntries(Bytes.data(), Bytes.size(), Out).ok());
}

TEST(Protocol, TraceRecordRoundTripAndRefusals) {
  TraceRecord In;
  In.SessionPid = 42;
  In.Dropped = 3;
  In.Names = {"__omp_offloading_k"};
  TraceEvent Req;
  Req.Type = uint8_t(MsgType::Submit);
  Req.Queue = 7;
  Req.RequestId = 9;
  Req.StartNs = 1000;
  Req.DurationNs = 50;
  Req.Bytes = 1 << 20;
  TraceEvent K;
  K.What = TraceEvent::Kernel;
  K.Name = 0;
  K.Thread = 5;
  In.Events = {Req, K};
  std::vector<uint8_t> Bytes = encodeTraceRecord(In);
  TraceRecord Out;
  ASSERT_TRUE(decodeTraceRecord(Bytes.data(), Bytes.size(), Out).ok());
  EXPECT_EQ(Out.SessionPid, 42u);
  EXPECT_EQ(Out.Dropped, 3u);
  ASSERT_EQ(Out.Events.size(), 2u);
  EXPECT_EQ(Out.Events[0].Bytes, 1u << 20);
  EXPECT_EQ(Out.Events[0].Queue, 7u);
  EXPECT_EQ(Out.Events[1].Thread, 5u);
  EXPECT_EQ(Out.Names[Out.Events[1].Name], "__omp_offloading_k");
  // A kernel naming no name, a count beyond the bytes, a short record.
  In.Events[1].Name = 1;
  std::vector<uint8_t> Bad = encodeTraceRecord(In);
  EXPECT_FALSE(decodeTraceRecord(Bad.data(), Bad.size(), Out).ok());
  Bytes[12] = 0xff;
  EXPECT_FALSE(decodeTraceRecord(Bytes.data(), Bytes.size(), Out).ok());
  Bytes = encodeTraceRecord(TraceRecord());
  Bytes.pop_back();
  EXPECT_FALSE(decodeTraceRecord(Bytes.data(), Bytes.size(), Out).ok());
}

std::vector<uint8_t> validFrame() {
  Header H;
  H.Type = MsgType::Alloc;
  Alloc A;
  A.Size = 64;
  return frame(H, A);
}

TEST(Protocol, RejectsTruncatedHeader) {
  std::vector<uint8_t> F = validFrame();
  Header H;
  Reader R;
  for (size_t Len = 0; Len < kHeaderSize; ++Len)
    EXPECT_FALSE(parseFrame(F.data(), Len, H, R).ok()) << Len;
  EXPECT_FALSE(parseFrame(nullptr, 100, H, R).ok());
}

TEST(Protocol, RejectsTruncatedOrPaddedBody) {
  // The body is the rest of the frame: one byte less or more no longer
  // decodes as the body its type announces.
  std::vector<uint8_t> F = validFrame();
  Header H;
  Reader R;
  Alloc A;
  ASSERT_TRUE(parseFrame(F.data(), F.size() - 1, H, R).ok());
  EXPECT_FALSE(decodeBody(R, A).ok());
  F.push_back(0);
  ASSERT_TRUE(parseFrame(F.data(), F.size(), H, R).ok());
  EXPECT_FALSE(decodeBody(R, A).ok());
  ASSERT_TRUE(parseFrame(F.data(), F.size() - 1, H, R).ok());
  EXPECT_TRUE(decodeBody(R, A).ok());
  EXPECT_EQ(A.Size, 64u);
}

TEST(Protocol, SuccessfulReplyIsOnlyItsValue) {
  Header H;
  H.Type = MsgType::Reply;
  Reply Ok;
  Ok.Value = 0x1234;
  std::vector<uint8_t> F = frame(H, Ok);
  EXPECT_EQ(F.size(), kHeaderSize + 8);
  Reader R;
  ASSERT_TRUE(parseFrame(F.data(), F.size(), H, R).ok());
  Reply B;
  B.Code = kErrInternal;
  B.Message = "stale";
  ASSERT_TRUE(decodeBody(R, B).ok());
  EXPECT_EQ(B.Code, kOk);
  EXPECT_EQ(B.Value, 0x1234u);
  EXPECT_TRUE(B.Message.empty());
  // A failure must say what failed: an error code without its message, or
  // a "failure" whose code is kOk, is malformed.
  Writer W;
  W.put(int32_t(kOk));
  W.put(uint64_t(1));
  W.putString("not an error");
  Reader Bad(W.bytes().data(), W.bytes().size());
  EXPECT_FALSE(decodeBody(Bad, B).ok());
}

TEST(Protocol, RejectsBadMagicVersionAndType) {
  Header H;
  Reader R;
  std::vector<uint8_t> F = validFrame();
  F[0] ^= 0xff;
  EXPECT_FALSE(parseFrame(F.data(), F.size(), H, R).ok());
  F = validFrame();
  F[2] = 99; // version
  EXPECT_FALSE(parseFrame(F.data(), F.size(), H, R).ok());
  F = validFrame();
  F[3] = 0xee; // type
  EXPECT_FALSE(parseFrame(F.data(), F.size(), H, R).ok());
  F = validFrame();
  F[3] = 0; // type 0 is not a message
  EXPECT_FALSE(parseFrame(F.data(), F.size(), H, R).ok());
}

TEST(Protocol, BodyOfWrongShapeIsRejected) {
  // A Free body (8 bytes) decoded as Alloc (12 bytes) must fail, and an
  // Alloc body decoded as Free must fail for leftover bytes.
  Header H;
  H.Type = MsgType::Free;
  Free Fr;
  std::vector<uint8_t> F = frame(H, Fr);
  Reader R;
  ASSERT_TRUE(parseFrame(F.data(), F.size(), H, R).ok());
  Alloc A;
  EXPECT_FALSE(decodeBody(R, A).ok());
  F = validFrame();
  ASSERT_TRUE(parseFrame(F.data(), F.size(), H, R).ok());
  Free Fr2;
  EXPECT_FALSE(decodeBody(R, Fr2).ok());
}

TEST(Protocol, HugeCountsAreRejectedWithoutAllocating) {
  // A string claiming more bytes than remain.
  Writer S;
  S.put<uint32_t>(1000);
  S.put<uint8_t>('x');
  Reader RS(S.bytes().data(), S.bytes().size());
  std::string Str;
  EXPECT_FALSE(RS.getString(Str));
  std::vector<uint8_t> Entries = {0xff, 0xff, 0xff, 0xff};
  std::vector<EntryInfo> Out;
  EXPECT_FALSE(decodeEntries(Entries.data(), Entries.size(), Out).ok());
}

TEST(Protocol, FuzzedFramesNeverCrash) {
  // Random mutations of valid frames: parse must fail or succeed cleanly.
  std::vector<uint8_t> Base = validFrame();
  uint32_t Seed = 12345;
  for (int Iter = 0; Iter < 20000; ++Iter) {
    std::vector<uint8_t> F = Base;
    Seed = Seed * 1103515245 + 12345;
    F[Seed % F.size()] = static_cast<uint8_t>(Seed >> 16);
    size_t Len = (Seed >> 8) % (F.size() + 1);
    Header H;
    Reader R;
    if (parseFrame(F.data(), Len, H, R).ok()) {
      Alloc A;
      (void)decodeBody(R, A);
    }
  }
}

} // namespace

namespace {
TEST(Protocol, OutputRoundTripAndLimits) {
  Header H;
  Output O;
  O.Stream = 2;
  O.Bytes = std::string("line\n\0binary", 12);
  Output Back = roundTrip(MsgType::Output, O, H);
  EXPECT_EQ(Back.Stream, 2);
  EXPECT_EQ(Back.Bytes, O.Bytes);
  // Only stdout and stderr, and at most kMaxBytes.
  for (Output Bad : {Output{3, "x"}, Output{0, "x"},
                     Output{1, std::string(Output::kMaxBytes + 1, 'a')}}) {
    std::vector<uint8_t> F = frame(H, Bad);
    Reader R;
    ASSERT_TRUE(parseFrame(F.data(), F.size(), H, R).ok());
    Output D;
    EXPECT_FALSE(decodeBody(R, D).ok());
  }
}

TEST(Protocol, ReplyCodesBecomeErrorCodes) {
  using ompdpu::ErrorCode;
  EXPECT_EQ(errorCodeOf(kErrIsa), ErrorCode::OtherIsa);
  EXPECT_EQ(errorCodeOf(kErrNoMemory), ErrorCode::NoMemory);
  EXPECT_EQ(errorCodeOf(kErrNotFound), ErrorCode::NotFound);
  EXPECT_EQ(errorCodeOf(12345), ErrorCode::Generic);
  // Context keeps the kind.
  ompdpu::Status S =
      ompdpu::Status::error(ErrorCode::OtherIsa, "client wants aarch64");
  EXPECT_EQ(S.withContext("cannot connect").code(), ErrorCode::OtherIsa);
  EXPECT_EQ(S.withContext("cannot connect").message(),
            "cannot connect: client wants aarch64");
}
} // namespace

TEST(Protocol, OutputCarriesItsOffset) {
  Header H;
  Output O{1, "abc", 4096};
  Output Back = roundTrip(MsgType::Output, O, H);
  EXPECT_EQ(Back.Offset, 4096u);
  EXPECT_EQ(Back.Bytes, "abc");
  EXPECT_EQ(Output{}.Offset, Output::kNotInStream);
}
