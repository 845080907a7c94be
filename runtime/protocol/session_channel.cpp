//===- session_channel.cpp - Supervisor <-> session messages --------------===//
#include "protocol/session_channel.h"

#include "common/log.h"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <poll.h>
#include <regex>
#include <sys/socket.h>

namespace ompdpu::protocol {

void SessionSetup::encode(Writer &W) const {
  W.put(Token);
  W.put(MemoryLimit);
  W.put(Cores);
  W.put(SpinMicros);
  W.put(SharedCores);
  W.put(SameHost);
  W.put(OutputFd);
  W.putString(Transports);
}
bool SessionSetup::decode(Reader &R) {
  return R.get(Token) && R.get(MemoryLimit) && R.get(Cores) &&
         R.get(SpinMicros) && R.get(SharedCores) && R.get(SameHost) &&
         R.get(OutputFd) && R.getString(Transports, 256) && Cores > 0 &&
         SharedCores <= 1 && SameHost <= 1;
}

void SessionReady::encode(Writer &W) const {
  W.putBytes(Address.data(), Address.size());
  W.put(static_cast<uint32_t>(ShmFiles.size()));
  for (const std::string &F : ShmFiles)
    W.putString(F);
}
bool SessionReady::decode(Reader &R) {
  uint32_t Count = 0;
  if (!R.getBytes(Address, 2048) || Address.empty() || !R.get(Count) ||
      Count > kMaxShmFiles)
    return false;
  ShmFiles.resize(Count);
  for (std::string &F : ShmFiles)
    if (!R.getString(F, 256))
      return false;
  return true;
}

void SessionCrash::encode(Writer &W) const {
  W.put(Signal);
  W.putString(Kernel);
}
bool SessionCrash::decode(Reader &R) {
  return R.get(Signal) && R.getString(Kernel, kMaxChannelFrame) && Signal > 0;
}

void SessionRawOutput::encode(Writer &W) const {
  W.put(Stream);
  W.putString(Bytes);
}
bool SessionRawOutput::decode(Reader &R) {
  return R.get(Stream) && (Stream == 1 || Stream == 2) &&
         R.getString(Bytes, kMaxRawOutputBytes);
}

namespace {
/// A channel frame's header, laid out as frameInto() lays it out (unit
/// tests hold the two together), without allocating.
size_t putChannelHeader(uint8_t *Buf, MsgType T) {
  Header H;
  H.Type = T;
  uint8_t Type = static_cast<uint8_t>(H.Type);
  size_t Len = 0;
  auto Put = [&](const void *P, size_t N) {
    std::memcpy(Buf + Len, P, N);
    Len += N;
  };
  Put(&H.Magic, 2);
  Put(&H.Version, 1);
  Put(&Type, 1);
  Put(&H.RequestId, 4);
  Put(&H.Queue, 2);
  Put(&H.Operand, 2);
  Put(&H.Seq, 4);
  return Len;
}
} // namespace

size_t encodeRawOutputFrame(uint8_t *Buf, uint8_t Stream, const char *Data,
                            uint32_t Len) {
  if (Len > kMaxRawOutputBytes)
    Len = kMaxRawOutputBytes;
  size_t At = putChannelHeader(Buf, MsgType::SessionRawOutput);
  Buf[At++] = Stream;
  std::memcpy(Buf + At, &Len, 4);
  std::memcpy(Buf + At + 4, Data, Len);
  return At + 4 + Len;
}

size_t encodeCrashFrame(uint8_t *Buf, int32_t Signal, const char *Kernel) {
  size_t Len = putChannelHeader(Buf, MsgType::SessionCrash);
  auto Put = [&](const void *P, size_t N) {
    std::memcpy(Buf + Len, P, N);
    Len += N;
  };
  Put(&Signal, 4);
  uint32_t NameLen = 0;
  const size_t Room = kMaxChannelFrame - Len - 4;
  while (Kernel && Kernel[NameLen] && NameLen < Room)
    ++NameLen;
  Put(&NameLen, 4);
  if (NameLen)
    Put(Kernel, NameLen);
  return Len;
}

Status sendChannelFrame(int Fd, const std::vector<uint8_t> &Frame) {
  ssize_t N;
  do
    N = send(Fd, Frame.data(), Frame.size(), MSG_NOSIGNAL);
  while (N < 0 && errno == EINTR);
  if (N != static_cast<ssize_t>(Frame.size()))
    return Status::error(format("session channel: %s",
                                N < 0 ? std::strerror(errno) : "short write"));
  return Status();
}

namespace {
/// Receive one packet; 0 bytes: the other end closed.
ssize_t receivePacket(int Fd, uint8_t *Buf, int Flags) {
  ssize_t N;
  do
    N = recv(Fd, Buf, kMaxChannelFrame, Flags);
  while (N < 0 && errno == EINTR);
  return N;
}
} // namespace

template <typename T>
Status receiveChannelMessage(int Fd, MsgType Type, T &Out, int TimeoutMs) {
  pollfd P{Fd, POLLIN, 0};
  int Ready;
  do
    Ready = poll(&P, 1, TimeoutMs);
  while (Ready < 0 && errno == EINTR);
  if (Ready == 0)
    return Status::error(
        format("no %s within %d ms", typeName(Type), TimeoutMs));
  uint8_t Buf[kMaxChannelFrame];
  ssize_t N = Ready < 0 ? -1 : receivePacket(Fd, Buf, 0);
  if (N < 0)
    return Status::error(format("session channel: %s", std::strerror(errno)));
  if (N == 0)
    return Status::error(format("channel closed before %s", typeName(Type)));
  Header H;
  Reader Body;
  if (Status S = parseFrame(Buf, static_cast<size_t>(N), H, Body); !S.ok())
    return Status::error("session channel: " + S.message());
  if (H.Type != Type)
    return Status::error(format("session channel: %s where %s was expected",
                                typeName(H.Type), typeName(Type)));
  if (Status S = decodeBody(Body, Out); !S.ok())
    return Status::error(format("malformed %s", typeName(Type)));
  return Status();
}

template Status receiveChannelMessage(int, MsgType, SessionSetup &, int);
template Status receiveChannelMessage(int, MsgType, SessionReady &, int);

std::vector<ChannelFrame> drainChannel(int Fd, bool &Closed) {
  std::vector<ChannelFrame> Frames;
  uint8_t Buf[kMaxChannelFrame];
  for (;;) {
    ssize_t N = receivePacket(Fd, Buf, MSG_DONTWAIT);
    if (N == 0)
      Closed = true;
    if (N <= 0)
      return Frames;
    Header H;
    Reader Body;
    if (!parseFrame(Buf, static_cast<size_t>(N), H, Body).ok()) {
      log(LogLevel::Warning, "session channel: dropping a malformed frame");
      continue;
    }
    ChannelFrame F;
    F.Type = H.Type;
    F.Body.assign(Buf + kHeaderSize, Buf + N);
    Frames.push_back(std::move(F));
  }
}

std::string formatReadyLine(const ReadyLine &L) {
  return "{\"listening\":\"" + L.address() +
         "\",\"pid\":" + std::to_string(L.Pid) + "}\n";
}

Expected<ReadyLine> parseReadyLine(const std::string &Line) {
  auto Bad = [&Line] {
    return Status::error(ErrorCode::Invalid,
                         "not a readiness line: '" +
                             Line.substr(0, Line.find('\n')) + "'");
  };
  // The one form formatReadyLine writes (scripts parse it as JSON).
  static const std::regex Form(
      R"re(\{"listening":"([^"]+):([0-9]{1,5})","pid":([0-9]{1,10})\}\n?)re");
  std::smatch M;
  if (!std::regex_match(Line, M, Form))
    return Bad();
  unsigned long Port = std::stoul(M[2].str());
  unsigned long long Pid = std::stoull(M[3].str());
  if (Port == 0 || Port > 65535 || Pid == 0 || Pid > INT32_MAX)
    return Bad();
  ReadyLine L;
  L.Host = M[1].str();
  L.Port = static_cast<uint16_t>(Port);
  L.Pid = static_cast<int>(Pid);
  return L;
}

} // namespace ompdpu::protocol
