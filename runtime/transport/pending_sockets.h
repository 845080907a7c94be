//===- pending_sockets.h - Connections not yet a connection request -------===//
//
// UCX's listener accepts every TCP connection and holds it, with a descriptor
// and an endpoint, until the client sends its connection request: no limit
// and no timeout of its own, and nothing of it reaches the server before.
// PendingSockets finds those sockets among this process's descriptors (on
// the listener's port, from a peer that sent no request yet) and shuts down
// the ones over the limits, oldest first, as sshd's MaxStartups does; UCX
// then sees them closed and frees what it held.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <sys/socket.h>

namespace ompdpu::transport {

/// How many accepted connections may wait for their request, and how long.
struct PendingLimits {
  size_t Total = 512;
  size_t PerSource = 64; ///< from one address
  std::chrono::milliseconds Timeout{10000};
};

/// What one sweep shut down, and why.
struct PendingDrops {
  size_t Late = 0, OverSource = 0, OverTotal = 0;
  std::string Source; ///< an address over its cap, if any
  size_t total() const { return Late + OverSource + OverTotal; }
};

class PendingSockets {
public:
  using Clock = std::chrono::steady_clock;
  PendingSockets(uint16_t Port, PendingLimits L) : Port(Port), Limits(L) {}

  /// The connection from Client sent its request: it is not pending.
  void requested(const sockaddr_storage &Client);
  /// Shut down the pending connections over the limits at Now.
  PendingDrops sweep(Clock::time_point Now);
  /// Connections pending at the last sweep.
  size_t pending() const { return FirstSeen.size(); }

private:
  uint16_t Port;
  PendingLimits Limits;
  std::map<unsigned long, Clock::time_point> FirstSeen; ///< by socket inode
  /// Shut down, until UCX closes them: not counted again.
  std::set<unsigned long> ShutDown;
  std::set<std::string> Requested; ///< peers "address port" that sent one
};

/// The port of an IPv4 or IPv6 socket address (0 for others).
uint16_t portOf(const sockaddr_storage &A);
/// "ADDRESS PORT" of a socket address, and ADDRESS alone.
std::string peerText(const sockaddr_storage &A);
std::string sourceText(const sockaddr_storage &A);

} // namespace ompdpu::transport
