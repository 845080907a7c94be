//===- session_channel.h - Supervisor <-> session messages ------*- C++ -*-===//
//
// A session process and the supervisor that started it talk over a
// SOCK_SEQPACKET socket pair (one frame per packet), in frames like every
// other message: the supervisor sends SessionSetup, the session answers
// SessionReady with its worker's address, and a crashing session sends
// SessionCrash from its signal handler. The supervisor's readiness line for
// scripts (--ready-fd) is defined here too. See PROTOCOL.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/host_port.h"
#include "common/status.h"
#include "protocol/messages.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ompdpu::protocol {

/// What a new session needs from its supervisor.
struct SessionSetup {
  uint64_t Token = 0;       ///< secret the client must present
  uint64_t MemoryLimit = 0; ///< bytes of device memory the client may hold
  uint32_t Cores = 1;       ///< cores kernels may use
  uint32_t SpinMicros = 0;  ///< busy-poll time before sleeping
  uint8_t SharedCores = 0;  ///< yield after every poll
  uint8_t SameHost = 0;     ///< the client is on this machine (cma)
  int32_t OutputFd = -1;    ///< the inherited output area (-1: none)
  std::string Transports;   ///< UCX_TLS for the session ("": UCX's choice)
  void encode(Writer &W) const;
  bool decode(Reader &R);
};

/// The session is listening: its worker's packed address.
/// Shared memory files a SessionReady may name.
constexpr uint32_t kMaxShmFiles = 16;

struct SessionReady {
  std::vector<uint8_t> Address;
  /// Its shared memory files, for the supervisor to remove after it: sent
  /// before any client code runs, and still checked (transport/shm_files.h).
  std::vector<std::string> ShmFiles;
  void encode(Writer &W) const;
  bool decode(Reader &R);
};

/// The session is dying of Signal while it ran Kernel ("": none).
struct SessionCrash {
  int32_t Signal = 0;
  std::string Kernel;
  void encode(Writer &W) const;
  bool decode(Reader &R);
};

/// Bytes a dying session's kernels wrote to fd Stream (1 or 2) that had not
/// reached its output ring: the supervisor sends them after the ring's.
struct SessionRawOutput {
  uint8_t Stream = 1;
  std::string Bytes;
  void encode(Writer &W) const;
  bool decode(Reader &R);
};

/// Largest frame on the channel (a SessionCrash with a long kernel name is
/// cut to fit).
constexpr size_t kMaxChannelFrame = 4096;
/// Largest SessionRawOutput::Bytes of one frame.
constexpr size_t kMaxRawOutputBytes = kMaxChannelFrame - kHeaderSize - 5;

/// A SessionCrash frame built in Buf (kMaxChannelFrame bytes) without
/// allocating, for a signal handler; returns its length.
size_t encodeCrashFrame(uint8_t *Buf, int32_t Signal, const char *Kernel);
/// A SessionRawOutput frame of Len (at most kMaxRawOutputBytes) bytes, built
/// the same way.
size_t encodeRawOutputFrame(uint8_t *Buf, uint8_t Stream, const char *Data,
                            uint32_t Len);

/// Send one frame on the channel.
Status sendChannelFrame(int Fd, const std::vector<uint8_t> &Frame);

/// Wait up to TimeoutMs (-1: no limit) for the next frame and decode it as
/// a T; an error names what came instead or why nothing came.
template <typename T>
Status receiveChannelMessage(int Fd, MsgType Type, T &Out, int TimeoutMs);

/// One frame read from the channel without waiting: Type and the raw body.
struct ChannelFrame {
  MsgType Type = MsgType::Ping;
  std::vector<uint8_t> Body;
};
/// Every frame waiting on a non-blocking channel; sets Closed at its end.
std::vector<ChannelFrame> drainChannel(int Fd, bool &Closed);

/// Decode a frame taken with drainChannel.
template <typename T> bool decodeChannelFrame(const ChannelFrame &F, T &Out) {
  Reader R(F.Body.data(), F.Body.size());
  return decodeBody(R, Out).ok();
}

/// The line a supervisor writes to --ready-fd once it accepts clients, one
/// line of JSON: {"listening":"<host>:<port>","pid":<pid>}.
struct ReadyLine {
  std::string Host;
  uint16_t Port = 0;
  int Pid = 0;
  /// HOST:PORT, an IPv6 host in brackets (as OMPDPU_DEVICES takes it).
  std::string address() const { return hostPortText(Host, Port); }
};
std::string formatReadyLine(const ReadyLine &L);
/// Parse a readiness line (with or without its newline).
Expected<ReadyLine> parseReadyLine(const std::string &Line);

} // namespace ompdpu::protocol
