//===- messages.cpp - Encoding and validation of protocol frames ---------===//
#include "protocol/messages.h"

#include "common/log.h"

namespace ompdpu::protocol {

const char *typeName(MsgType T) {
  switch (T) {
  case MsgType::Hello:
    return "Hello";
  case MsgType::HelloReply:
    return "HelloReply";
  case MsgType::Attach:
    return "Attach";
  case MsgType::Reply:
    return "Reply";
  case MsgType::Alloc:
    return "Alloc";
  case MsgType::Free:
    return "Free";
  case MsgType::Submit:
    return "Submit";
  case MsgType::Retrieve:
    return "Retrieve";
  case MsgType::LoadImage:
    return "LoadImage";
  case MsgType::Run:
    return "Run";
  case MsgType::ExchangeOut:
    return "ExchangeOut";
  case MsgType::PeerSubmit:
    return "PeerSubmit";
  case MsgType::Ping:
    return "Ping";
  case MsgType::Bye:
    return "Bye";
  case MsgType::SessionExit:
    return "SessionExit";
  case MsgType::Output:
    return "Output";
  case MsgType::Batch:
    return "Batch";
  case MsgType::Trace:
    return "Trace";
  case MsgType::SessionRawOutput:
    return "SessionRawOutput";
  case MsgType::Landed:
    return "Landed";
  case MsgType::SessionSetup:
    return "SessionSetup";
  case MsgType::SessionReady:
    return "SessionReady";
  case MsgType::SessionCrash:
    return "SessionCrash";
  case MsgType::AuthChallenge:
    return "AuthChallenge";
  case MsgType::AuthProof:
    return "AuthProof";
  }
  return "Unknown";
}

Status parseFrame(const void *Data, size_t Len, Header &H, Reader &Body) {
  if (!Data || Len < kHeaderSize)
    return Status::error(format("truncated frame: %zu bytes, header needs %zu",
                                Len, kHeaderSize));
  Reader R(static_cast<const uint8_t *>(Data), Len);
  uint8_t Type = 0;
  R.get(H.Magic);
  R.get(H.Version);
  R.get(Type);
  R.get(H.RequestId);
  R.get(H.Queue);
  R.get(H.Operand);
  R.get(H.Seq);
  if (H.Magic != kMagic)
    return Status::error(format("bad magic 0x%04x", H.Magic));
  if (H.Version != kVersion && static_cast<MsgType>(Type) != MsgType::Hello &&
      static_cast<MsgType>(Type) != MsgType::HelloReply)
    return Status::error(
        format("protocol version %u, expected %u", H.Version, kVersion));
  if (Type < static_cast<uint8_t>(MsgType::Hello) ||
      Type > static_cast<uint8_t>(MsgType::Last))
    return Status::error(format("unknown message type %u", Type));
  H.Type = static_cast<MsgType>(Type);
  if (Len - kHeaderSize > kMaxBody)
    return Status::error(format("body of %zu bytes is too long (at most %zu)",
                                Len - kHeaderSize, kMaxBody));
  Body = Reader(static_cast<const uint8_t *>(Data) + kHeaderSize,
                Len - kHeaderSize);
  return Status();
}

void Hello::encode(Writer &W) const {
  W.put(MinVersion);
  W.put(MaxVersion);
  W.putString(ClientName);
  W.putString(Isa);
  W.putString(BootId);
  W.put(static_cast<uint8_t>(Method));
  W.putString(User);
  W.putBytes(ClientNonce.data(), ClientNonce.size());
  W.put(Uid);
}
bool Hello::decode(Reader &R) {
  uint8_t M = 0;
  if (!(R.get(MinVersion) && R.get(MaxVersion) &&
        R.getString(ClientName, 256) && R.getString(Isa, 64) &&
        R.getString(BootId, 64) && R.get(M) && R.getString(User, 256) &&
        R.getBytes(ClientNonce, kNonceBytes) && R.get(Uid)))
    return false;
  Method = static_cast<AuthMethod>(M);
  return M <= static_cast<uint8_t>(AuthMethod::Munge);
}

// A MUNGE credential is about 200 bytes; 4 KiB leaves room for big payloads.
constexpr size_t kMaxProof = 4096;

void AuthChallenge::encode(Writer &W) const {
  W.put(static_cast<uint8_t>(Method));
  W.putBytes(ServerNonce.data(), ServerNonce.size());
  W.putBytes(Proof.data(), Proof.size());
}
bool AuthChallenge::decode(Reader &R) {
  uint8_t M = 0;
  if (!(R.get(M) && R.getBytes(ServerNonce, kNonceBytes) &&
        R.getBytes(Proof, kMaxProof)))
    return false;
  Method = static_cast<AuthMethod>(M);
  return M <= static_cast<uint8_t>(AuthMethod::Munge);
}

void AuthProof::encode(Writer &W) const {
  W.putBytes(Proof.data(), Proof.size());
}
bool AuthProof::decode(Reader &R) { return R.getBytes(Proof, kMaxProof); }

void HelloReply::encode(Writer &W) const {
  W.put(Code);
  W.put(Version);
  W.putString(Message);
  W.putString(Isa);
  W.put(Cores);
  W.put(Memory);
  W.put(Token);
  W.putBytes(SessionAddress.data(), SessionAddress.size());
  W.putString(Hostname);
  W.put(SameHost);
}
bool HelloReply::decode(Reader &R) {
  return R.get(Code) && R.get(Version) && R.getString(Message, 4096) &&
         R.getString(Isa, 64) && R.get(Cores) && R.get(Memory) &&
         R.get(Token) && R.getBytes(SessionAddress, 64 * 1024) &&
         R.getString(Hostname, 256) && R.get(SameHost);
}

void Attach::encode(Writer &W) const { W.put(Token); }
bool Attach::decode(Reader &R) { return R.get(Token); }

// Replies are the most frequent message: a success is its value alone (a
// 24-byte frame: small frames cross shared memory faster); a failure
// carries its code and message.
void Reply::encode(Writer &W) const {
  if (Code != kOk)
    W.put(Code);
  W.put(Value);
  if (Code != kOk)
    W.putString(Message);
}
bool Reply::decode(Reader &R) {
  Message.clear();
  if (R.remaining() == sizeof(Value)) {
    Code = kOk;
    return R.get(Value);
  }
  return R.get(Code) && Code != kOk && R.get(Value) &&
         R.getString(Message, 64 * 1024);
}

void Alloc::encode(Writer &W) const {
  W.put(Size);
  W.put(Kind);
}
bool Alloc::decode(Reader &R) { return R.get(Size) && R.get(Kind); }

void Free::encode(Writer &W) const { W.put(Ptr); }
bool Free::decode(Reader &R) { return R.get(Ptr); }

void Transfer::encode(Writer &W) const {
  W.put(DevicePtr);
  W.put(Size);
}
bool Transfer::decode(Reader &R) { return R.get(DevicePtr) && R.get(Size); }

void BatchRef::encode(Writer &W) const {
  W.put(static_cast<uint32_t>(NumArgs));
  for (size_t K = 0; K < NumArgs; ++K)
    W.put(Args[K]);
  for (auto [P, N] : {std::pair{In, NumIn}, std::pair{Out, NumOut}}) {
    W.put(static_cast<uint32_t>(N));
    for (size_t K = 0; K < N; ++K) {
      W.put(P[K].DevicePtr);
      W.put(P[K].Size);
    }
  }
}

bool BatchView::decode(Reader &R) {
  // Each count is checked against the bytes left before it is used.
  auto Array = [&R](size_t Width, size_t &N, const uint8_t *&At) {
    uint32_t Count = 0;
    if (!R.get(Count) || Count > R.remaining() / Width)
      return false;
    N = Count;
    At = R.view(Width * N);
    return At != nullptr;
  };
  return Array(8, NumArgs, ArgsAt) && Array(16, NumIn, InAt) &&
         Array(16, NumOut, OutAt);
}

uint64_t BatchView::total(const uint8_t *At, size_t N) {
  uint64_t Sum = 0;
  for (size_t K = 0; K < N; ++K) {
    uint64_t Size = piece(At, K).Size;
    if (Sum + Size < Sum)
      return ~0ull;
    Sum += Size;
  }
  return Sum;
}

void Landed::encode(Writer &W) const {
  W.put(Queue);
  W.put(Seq);
}
bool Landed::decode(Reader &R) { return R.get(Queue) && R.get(Seq); }

void LoadImage::encode(Writer &W) const {
  W.put(Size);
  W.put(DeviceNum);
  W.put(NumDevices);
}
bool LoadImage::decode(Reader &R) {
  return R.get(Size) && R.get(DeviceNum) && R.get(NumDevices);
}

void Run::encode(Writer &W) const {
  for (uint64_t A : Args)
    W.put(A);
}
bool Run::decode(Reader &R) {
  // The body is the arguments, 8 bytes each: nothing else may be left over.
  if (R.remaining() % 8)
    return false;
  Args.resize(R.remaining() / 8);
  for (uint64_t &A : Args)
    R.get(A);
  return R.ok();
}

void ExchangeOut::encode(Writer &W) const {
  W.put(SrcPtr);
  W.put(Size);
  W.put(DstPtr);
  W.put(DstToken);
  W.putBytes(PeerAddress.data(), PeerAddress.size());
}
bool ExchangeOut::decode(Reader &R) {
  return R.get(SrcPtr) && R.get(Size) && R.get(DstPtr) && R.get(DstToken) &&
         R.getBytes(PeerAddress, 64 * 1024);
}

void PeerSubmit::encode(Writer &W) const {
  W.put(Token);
  W.put(DstPtr);
  W.put(Size);
}
bool PeerSubmit::decode(Reader &R) {
  return R.get(Token) && R.get(DstPtr) && R.get(Size);
}

ErrorCode errorCodeOf(int32_t ReplyCode) {
  switch (ReplyCode) {
  case kErrInvalid:
    return ErrorCode::Invalid;
  case kErrNoMemory:
    return ErrorCode::NoMemory;
  case kErrLoad:
    return ErrorCode::Load;
  case kErrNotFound:
    return ErrorCode::NotFound;
  case kErrVersion:
    return ErrorCode::Version;
  case kErrInternal:
    return ErrorCode::Internal;
  case kErrPeer:
    return ErrorCode::Peer;
  case kErrIsa:
    return ErrorCode::OtherIsa;
  case kErrBusy:
    return ErrorCode::Busy;
  case kErrAuth:
    return ErrorCode::Auth;
  default:
    return ErrorCode::Generic;
  }
}

void Output::encode(Writer &W) const {
  W.put(Stream);
  W.put(Offset);
  W.putString(Bytes);
}
bool Output::decode(Reader &R) {
  return R.get(Stream) && (Stream == 1 || Stream == 2) && R.get(Offset) &&
         R.getString(Bytes, kMaxBytes);
}

std::vector<uint8_t> outputFrame(uint8_t Stream, uint64_t Offset,
                                 const char *Data, size_t Len) {
  Output O;
  O.Stream = Stream;
  O.Offset = Offset;
  O.Bytes.assign(Data, Len);
  Header H;
  H.Type = MsgType::Output;
  return frame(H, O);
}

void SessionExit::encode(Writer &W) const {
  W.put(Signal);
  W.put(ExitCode);
  W.putString(Message);
}
bool SessionExit::decode(Reader &R) {
  return R.get(Signal) && R.get(ExitCode) && R.getString(Message, 4096);
}

std::vector<uint8_t> encodeEntries(const std::vector<EntryInfo> &Entries) {
  Writer W;
  W.put(static_cast<uint32_t>(Entries.size()));
  for (const EntryInfo &E : Entries) {
    W.put(E.Addr);
    W.put(E.Size);
    W.put(E.Flags);
    W.put(E.Kernel);
    W.putString(E.Name);
  }
  return std::move(W.bytes());
}

Status decodeEntries(const uint8_t *P, size_t N, std::vector<EntryInfo> &Out) {
  Reader R(P, N);
  uint32_t Count = 0;
  // An entry takes at least 26 bytes (an empty name): refuse counts the
  // table cannot hold before reserving memory for them.
  if (!R.get(Count) || Count > R.remaining() / 26)
    return Status::error("malformed entry table");
  Out.resize(Count);
  for (EntryInfo &E : Out)
    if (!(R.get(E.Addr) && R.get(E.Size) && R.get(E.Flags) && R.get(E.Kernel) &&
          R.getString(E.Name, 4096)))
      return Status::error("malformed entry table");
  if (!R.finishedCleanly())
    return Status::error("trailing bytes after entry table");
  return Status();
}

void TraceControl::encode(Writer &W) const {
  W.put(static_cast<uint8_t>(Action));
}

bool TraceControl::decode(Reader &R) {
  uint8_t A = 0;
  if (!R.get(A) ||
      (A != uint8_t(TraceAction::Start) && A != uint8_t(TraceAction::Collect)))
    return false;
  Action = static_cast<TraceAction>(A);
  return true;
}

namespace {
constexpr size_t kTraceEventBytes = 1 + 1 + 2 + 4 + 4 + 4 + 8 + 8 + 8;
constexpr size_t kMaxTraceName = 4096;
} // namespace

std::vector<uint8_t> encodeTraceRecord(const TraceRecord &T) {
  Writer W;
  W.put(T.SessionPid);
  W.put(T.Dropped);
  W.put(static_cast<uint32_t>(T.Names.size()));
  for (const std::string &N : T.Names)
    W.putString(N.size() > kMaxTraceName ? N.substr(0, kMaxTraceName) : N);
  W.put(static_cast<uint32_t>(T.Events.size()));
  for (const TraceEvent &E : T.Events) {
    W.put(E.What);
    W.put(E.Type);
    W.put(E.Queue);
    W.put(E.RequestId);
    W.put(E.Thread);
    W.put(E.Name);
    W.put(E.StartNs);
    W.put(E.DurationNs);
    W.put(E.Bytes);
  }
  return std::move(W.bytes());
}

Status decodeTraceRecord(const uint8_t *P, size_t N, TraceRecord &Out) {
  Reader R(P, N);
  uint32_t Count = 0;
  // A name takes at least its 4-byte length, an event kTraceEventBytes:
  // counts the record cannot hold are refused before memory is reserved.
  if (!R.get(Out.SessionPid) || !R.get(Out.Dropped) || !R.get(Count) ||
      Count > R.remaining() / 4)
    return Status::error("malformed trace record");
  Out.Names.resize(Count);
  for (std::string &S : Out.Names)
    if (!R.getString(S, kMaxTraceName))
      return Status::error("malformed trace record");
  if (!R.get(Count) || Count > R.remaining() / kTraceEventBytes)
    return Status::error("malformed trace record");
  Out.Events.resize(Count);
  for (TraceEvent &E : Out.Events) {
    if (!(R.get(E.What) && R.get(E.Type) && R.get(E.Queue) &&
          R.get(E.RequestId) && R.get(E.Thread) && R.get(E.Name) &&
          R.get(E.StartNs) && R.get(E.DurationNs) && R.get(E.Bytes)))
      return Status::error("malformed trace record");
    if ((E.What != TraceEvent::Request && E.What != TraceEvent::Kernel) ||
        (E.What == TraceEvent::Kernel && E.Name >= Out.Names.size()))
      return Status::error("malformed trace record: bad event");
  }
  if (!R.finishedCleanly())
    return Status::error("trailing bytes after trace record");
  return Status();
}

} // namespace ompdpu::protocol
