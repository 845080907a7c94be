//===- messages.h - The ompdpu wire protocol --------------------*- C++ -*-===//
//
// Every message is defined once here and used by both the plugin and the
// server. A message is a frame (a fixed header and a typed body) sent as the
// header of a UCX active message (small frames without bulk data: as its
// data); bulk bytes (mapped data, images) travel as the active message's
// data, so that the receiver can land them directly in the destination
// buffer. See PROTOCOL.md beside this file.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/status.h"
#include "protocol/wire.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ompdpu::protocol {

/// "OD" in little-endian byte order.
constexpr uint16_t kMagic = 0x444f;
/// The protocol version this build speaks.
constexpr uint16_t kVersion = 8;
/// The active-message id of frames that may carry bulk data (the frame is
/// the message's header, the bulk data its data).
constexpr unsigned kAmId = 7;
/// The active-message id of small frames without bulk data (the frame is the
/// message's data). Received without UCX's persistent-data copy: the
/// receiver reads the frame where UCX delivered it.
constexpr unsigned kAmIdFrame = 8;
/// Size of the encoded frame header. Small on purpose: a Run without
/// arguments is the header alone, and with UCX's own headers it then fills
/// one cache line of UCX's shared-memory FIFO instead of two.
constexpr size_t kHeaderSize = 16;
/// Largest body accepted (bulk data travels outside the frame).
constexpr size_t kMaxBody = 1 << 20;

/// The kind of a frame.
enum class MsgType : uint8_t {
  Hello = 1,     ///< client -> supervisor: protocol range, client name
  HelloReply,    ///< supervisor -> client: device facts and session address
  Attach,        ///< client -> session: proves the client owns the session
  Reply,         ///< any answer: status, a value, optional bulk data
  Alloc,         ///< allocate device memory
  Free,          ///< free device memory
  Submit,        ///< host -> device copy; the bytes are the bulk data
  Retrieve,      ///< device -> host copy; the reply carries the bytes
  LoadImage,     ///< load a device image; the image is the bulk data
  Run,           ///< run a kernel with pointer-sized arguments
  ExchangeOut,   ///< ask a session to push device bytes to a peer session
  PeerSubmit,    ///< session -> session copy into the peer's memory
  Ping,          ///< liveness check; answered with an empty Reply
  Bye,           ///< orderly disconnect
  SessionExit,   ///< supervisor -> client: the session process ended
  Batch,         ///< a queue's small copies in, kernel run and copies out
  Landed,        ///< answered once a queue's operation has its in bytes placed
  Output,        ///< session (or supervisor) -> client: what kernels printed
  SessionSetup,  ///< supervisor -> session (its channel): the session's terms
  SessionReady,  ///< session -> supervisor: the session's worker address
  SessionCrash,  ///< session -> supervisor: dying of a signal in a kernel
  AuthChallenge, ///< supervisor -> client: its nonce and its proof
  AuthProof,     ///< client -> supervisor: the client's proof
  Trace,         ///< client -> session: start recording, or collect what was
  SessionRawOutput, ///< session -> supervisor, dying: raw writes not in a ring
  Last = SessionRawOutput
};

/// Printable name of a message type ("Submit").
const char *typeName(MsgType T);

/// The fixed frame header. RequestId pairs a Reply with its request (ids
/// wrap around; kHeartbeatId is never used for a request that wants its
/// answer); Queue and Seq order the operations of one asynchronous queue (Queue
/// 0: none). Operand is a small argument of some message types (Run: the
/// kernel's handle), 0 for the others. The body is the rest of the frame.
struct Header {
  uint16_t Magic = kMagic;
  uint8_t Version = kVersion;
  MsgType Type = MsgType::Ping;
  uint32_t RequestId = 0;
  uint16_t Queue = 0;
  uint16_t Operand = 0;
  uint32_t Seq = 0;
};
/// Queue ids fit the header's 16 bits.
constexpr uint32_t kMaxQueueId = 0xffff;
/// The RequestId of a heartbeat Ping: answered, but nobody waits for it.
constexpr uint32_t kHeartbeatId = 0;

/// Status codes carried in replies.
enum ReplyCode : int32_t {
  kOk = 0,
  kErrInvalid = 1,  ///< malformed or out-of-range request
  kErrNoMemory = 2, ///< device memory limit reached
  kErrLoad = 3,     ///< image could not be loaded
  kErrNotFound = 4, ///< unknown pointer, kernel or token
  kErrVersion = 5,  ///< protocol version mismatch
  kErrInternal = 6, ///< server-side failure
  kErrPeer = 7,     ///< a peer session could not be reached
  kErrIsa = 8,      ///< the client wants another ISA
  kErrBusy = 9,     ///< the server serves as many sessions as it may
  kErrAuth = 10,    ///< the client is not authenticated (or not allowed)
};

/// The Status code a reply code stands for.
ErrorCode errorCodeOf(int32_t ReplyCode);

/// How a client proves who it is (PROTOCOL.md, "Authentication").
enum class AuthMethod : uint8_t {
  None = 0,  ///< only a server started with --insecure accepts it
  Key = 1,   ///< HMAC-SHA256 challenge and response with a shared key file
  Munge = 2, ///< MUNGE credentials in both directions
};

/// Size of each side's nonce.
constexpr size_t kNonceBytes = 32;

struct Hello {
  uint16_t MinVersion = kVersion;
  uint16_t MaxVersion = kVersion;
  std::string ClientName;
  std::string Isa;    ///< ISA the client wants; empty: any (no session if not)
  std::string BootId; ///< the client kernel's boot id: same machine?
  AuthMethod Method = AuthMethod::None;
  std::string User;                 ///< Key: whose key the client holds
  std::vector<uint8_t> ClientNonce; ///< kNonceBytes, fresh per connection
  uint32_t Uid = 0; ///< the client process's uid (transport choice only)
  void encode(Writer &W) const;
  bool decode(Reader &R);
};

/// The server's nonce and its proof that it holds the key (or a MUNGE
/// credential over both nonces), answering a Hello.
struct AuthChallenge {
  AuthMethod Method = AuthMethod::None;
  std::vector<uint8_t> ServerNonce;
  std::vector<uint8_t> Proof;
  void encode(Writer &W) const;
  bool decode(Reader &R);
};

/// The client's proof over both nonces.
struct AuthProof {
  std::vector<uint8_t> Proof;
  void encode(Writer &W) const;
  bool decode(Reader &R);
};

struct HelloReply {
  int32_t Code = kOk;
  uint16_t Version = kVersion;
  std::string Message;
  std::string Isa; ///< "x86_64" or "aarch64"
  uint32_t Cores = 0;
  uint64_t Memory = 0; ///< bytes the session may allocate
  uint64_t Token = 0;  ///< secret that attaches the client to its session
  std::vector<uint8_t> SessionAddress; ///< packed UCX worker address
  std::string Hostname;
  /// 1: client and session share a kernel and an account (emulated DPU);
  /// 2: a kernel only (the session runs as another user); 0: neither.
  uint8_t SameHost = 0;
  void encode(Writer &W) const;
  bool decode(Reader &R);
};

struct Attach {
  uint64_t Token = 0;
  void encode(Writer &W) const;
  bool decode(Reader &R);
};

struct Reply {
  int32_t Code = kOk;
  uint64_t Value = 0;
  std::string Message;
  void encode(Writer &W) const;
  bool decode(Reader &R);
};

struct Alloc {
  uint64_t Size = 0;
  int32_t Kind = 0;
  void encode(Writer &W) const;
  bool decode(Reader &R);
};

struct Free {
  uint64_t Ptr = 0;
  void encode(Writer &W) const;
  bool decode(Reader &R);
};

/// Submit (bytes in the bulk data) and Retrieve (bytes in the reply).
struct Transfer {
  uint64_t DevicePtr = 0;
  uint64_t Size = 0;
  void encode(Writer &W) const;
  bool decode(Reader &R);
};

/// A range of device memory a Batch copies into or out of.
struct Piece {
  uint64_t DevicePtr = 0;
  uint64_t Size = 0;
};

/// What one queue does between two round trips, as one message: copy small
/// host bytes into device memory, run a kernel, copy small device ranges
/// back. Body: `u32 nArgs, u64 args[nArgs], u32 nIn, Piece in[nIn], u32 nOut,
/// Piece out[nOut]`; the kernel is the header's Operand (0: none). The bulk
/// data holds the bytes of the in pieces back to back, the reply's bulk data
/// those of the out pieces. A target region with small maps is then one
/// request and one reply, like an empty region.
///
/// Encoded from the caller's arrays (the client builds no message object).
struct BatchRef {
  const uint64_t *Args = nullptr;
  size_t NumArgs = 0;
  const Piece *In = nullptr;
  size_t NumIn = 0;
  const Piece *Out = nullptr;
  size_t NumOut = 0;
  void encode(Writer &W) const;
};

/// A decoded Batch body: views into the frame, no allocation.
class BatchView {
public:
  bool decode(Reader &R);
  size_t numArgs() const { return NumArgs; }
  size_t numIn() const { return NumIn; }
  size_t numOut() const { return NumOut; }
  uint64_t arg(size_t K) const { return load(ArgsAt + 8 * K); }
  Piece in(size_t K) const { return piece(InAt, K); }
  Piece out(size_t K) const { return piece(OutAt, K); }
  /// Sum of the in (out) pieces' sizes; ~0 when it overflows, which no
  /// data length can match.
  uint64_t inBytes() const { return total(InAt, NumIn); }
  uint64_t outBytes() const { return total(OutAt, NumOut); }

private:
  static uint64_t load(const uint8_t *P) {
    uint64_t V;
    std::memcpy(&V, P, 8);
    return V;
  }
  static Piece piece(const uint8_t *At, size_t K) {
    return {load(At + 16 * K), load(At + 16 * K + 8)};
  }
  static uint64_t total(const uint8_t *At, size_t N);
  const uint8_t *ArgsAt = nullptr, *InAt = nullptr, *OutAt = nullptr;
  size_t NumArgs = 0, NumIn = 0, NumOut = 0;
};

/// Asks to be answered once the operation numbered Seq of queue Queue has
/// its host -> device bytes in place (it has finished, or it is a Batch
/// whose kernel may still run). Sent on queue 0: it waits for nothing
/// itself. An event recorded between a Batch's copies and its kernel is
/// reached then, not when the kernel ends.
struct Landed {
  uint32_t Queue = 0;
  uint32_t Seq = 0;
  void encode(Writer &W) const;
  bool decode(Reader &R);
};

struct LoadImage {
  uint64_t Size = 0;
  /// What omp_get_device_num() and omp_get_num_devices() answer in the
  /// image's kernels: the device's number among its plugin's devices and
  /// their count, as LLVM's GPU plugins put them in the device environment.
  int32_t DeviceNum = 0;
  int32_t NumDevices = 1;
  void encode(Writer &W) const;
  bool decode(Reader &R);
};

/// One offload entry of a loaded image, as reported back to the plugin.
struct EntryInfo {
  uint64_t Addr = 0;
  uint64_t Size = 0;
  int32_t Flags = 0;
  uint16_t Kernel = 0; ///< a kernel's handle for Run (1, 2, ...); 0: a global
  std::string Name;
};

/// The entry table carried as bulk data in the reply to LoadImage.
std::vector<uint8_t> encodeEntries(const std::vector<EntryInfo> &Entries);
Status decodeEntries(const uint8_t *P, size_t N, std::vector<EntryInfo> &Out);

/// Run a kernel: the kernel is the header's Operand (its handle from the
/// entry table); the body is its arguments alone, so that a kernel without
/// arguments is a bare header.
struct Run {
  std::vector<uint64_t> Args; ///< already offset: arg i = Args[i]+Offsets[i]
  void encode(Writer &W) const;
  bool decode(Reader &R);
};

/// A Run body encoded straight from the caller's arguments, as Run encodes
/// it: the client's launch path fills no vector first.
struct RunArgs {
  const uint64_t *Args = nullptr;
  size_t Count = 0;
  void encode(Writer &W) const {
    for (size_t K = 0; K < Count; ++K)
      W.put(Args[K]);
  }
};

struct ExchangeOut {
  uint64_t SrcPtr = 0;
  uint64_t Size = 0;
  uint64_t DstPtr = 0;
  uint64_t DstToken = 0;
  std::vector<uint8_t> PeerAddress;
  void encode(Writer &W) const;
  bool decode(Reader &R);
};

struct PeerSubmit {
  uint64_t Token = 0;
  uint64_t DstPtr = 0;
  uint64_t Size = 0;
  void encode(Writer &W) const;
  bool decode(Reader &R);
};

/// Bodies with no fields.
struct Empty {
  void encode(Writer &) const {}
  bool decode(Reader &) { return true; }
};

/// Bytes kernels wrote to stdout (Stream 1) or stderr (2), for the client to
/// write to its own. Not answered. Sent before the reply of the request
/// whose kernel wrote them, or by the supervisor before SessionExit.
struct Output {
  uint8_t Stream = 1;
  std::string Bytes;
  /// Where Bytes start in the stream (bytes since the session started), so
  /// that a client given a piece twice (by the session, then by the
  /// supervisor after the session died) writes it once.
  uint64_t Offset = kNotInStream;
  /// Offset of a note of ompdpu's own, written whatever came before.
  static constexpr uint64_t kNotInStream = ~uint64_t(0);
  /// Largest Bytes sent in one message.
  static constexpr size_t kMaxBytes = 4096;
  void encode(Writer &W) const;
  bool decode(Reader &R);
};

/// A whole Output frame: Len (at most Output::kMaxBytes) bytes of Stream.
std::vector<uint8_t> outputFrame(uint8_t Stream, uint64_t Offset,
                                 const char *Data, size_t Len);

struct SessionExit {
  int32_t Signal = 0;
  int32_t ExitCode = 0;
  std::string Message;
  void encode(Writer &W) const;
  bool decode(Reader &R);
};

/// What a Trace request asks (PROTOCOL.md, "Traces"). Both are answered
/// with the session's clock (steady, in ns) as the reply's Value, which the
/// client pairs with its own to align the two.
enum class TraceAction : uint8_t {
  Start = 1,   ///< record from now on
  Collect = 2, ///< stop; the reply's bulk data is the TraceRecord
};

struct TraceControl {
  TraceAction Action = TraceAction::Start;
  void encode(Writer &W) const;
  bool decode(Reader &R);
};

/// What a session recorded: a request from its arrival to its answer, or a
/// kernel's call. Times are the session's steady clock, in ns.
struct TraceEvent {
  enum Kind : uint8_t { Request = 1, Kernel = 2 };
  uint8_t What = Request;
  uint8_t Type = 0;   ///< Request: its MsgType
  uint16_t Queue = 0; ///< Request: its queue
  uint32_t RequestId = 0;
  uint32_t Thread = 0; ///< the session thread that did it
  uint32_t Name = 0;   ///< Kernel: index into TraceRecord::Names
  uint64_t StartNs = 0;
  uint64_t DurationNs = 0;
  uint64_t Bytes = 0; ///< Request: bulk bytes in and out
};

struct TraceRecord {
  std::vector<std::string> Names; ///< kernel names
  std::vector<TraceEvent> Events;
  uint64_t Dropped = 0; ///< events beyond what the session keeps
  uint32_t SessionPid = 0;
};

/// The TraceRecord carried as bulk data in the reply to Trace Collect.
std::vector<uint8_t> encodeTraceRecord(const TraceRecord &T);
Status decodeTraceRecord(const uint8_t *P, size_t N, TraceRecord &Out);

/// Encode a frame into Out (replacing its contents, keeping its capacity):
/// the header followed by the body, in one buffer.
template <typename Body>
void frameInto(std::vector<uint8_t> &Out, Header H, const Body &B) {
  Writer W;
  W.reuse(Out);
  W.put(H.Magic);
  W.put(H.Version);
  W.put(static_cast<uint8_t>(H.Type));
  W.put(H.RequestId);
  W.put(H.Queue);
  W.put(H.Operand);
  W.put(H.Seq);
  B.encode(W);
  Out.swap(W.bytes());
}

/// Build a frame in a new buffer.
template <typename Body> std::vector<uint8_t> frame(Header H, const Body &B) {
  std::vector<uint8_t> Out;
  frameInto(Out, H, B);
  return Out;
}

/// Validate a received frame's header (magic, version, type, lengths) and
/// position Body on its body. Nothing in the frame is trusted before this.
Status parseFrame(const void *Data, size_t Len, Header &H, Reader &Body);

/// Decode a body of the expected type; rejects short and over-long bodies.
template <typename BodyT> Status decodeBody(Reader &R, BodyT &B) {
  if (!B.decode(R) || !R.finishedCleanly())
    return Status::error("malformed message body");
  return Status();
}

} // namespace ompdpu::protocol
