//===- handshake.h - What a client and a supervisor say first ---*- C++ -*-===//
#pragma once

#include "common/status.h"
#include "protocol/messages.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ompdpu::client {

/// What a server said about itself in the handshake.
struct ServerInfo {
  std::string Isa;
  uint32_t Cores = 0;
  uint64_t Memory = 0;
  std::string Hostname;
  uint16_t Version = 0;
  uint64_t Token = 0;
  std::vector<uint8_t> SessionAddress;
  bool SameHost = false;     ///< the session shares this machine and account
  bool OtherAccount = false; ///< same machine, the session another user's
};

/// The Hello this process sends (WantIsa: refuse servers of another ISA).
protocol::Hello helloFor(const std::string &WantIsa);

/// Read a HelloReply body: the server's facts, or why there is no session
/// (its reply code carried as the error's code: ErrorCode::OtherIsa for a
/// server of another ISA, ErrorCode::Version for a protocol mismatch).
Expected<ServerInfo> acceptHelloReply(protocol::Reader &Body);

/// A connection failure, with a hint when nothing listens at the address
/// or the user's UCX_TLS may be what leaves no transport to the server.
Status explainConnectFailure(const Status &S);

} // namespace ompdpu::client
