//===- intake.h - Connections until their client has proved who it is -----===//
//
// A connection the supervisor accepts has --handshake-timeout to say Hello
// and, unless the server is --insecure, to answer the challenge with a proof
// (PROTOCOL.md, "Authentication"). The intake checks versions and ISA,
// keeps each handshake's state between challenge and proof, refuses what
// fails, and hands over the clients it admits; only those get a session.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "protocol/messages.h"
#include "protocol/wire.h"
#include "server/authenticator.h"
#include "server/options.h"
#include "transport/transport.h"

#include <chrono>
#include <map>
#include <optional>
#include <string>

namespace ompdpu::server {

/// A client that proved who it is (or needed not), to be served.
struct Admission {
  transport::Peer From = nullptr;
  protocol::Header Request; ///< its Hello, which the HelloReply answers
  protocol::Hello Hi;
  Identity Id;
};

class Intake {
public:
  Intake(const ServerOptions &O, const Authenticator &A) : Opts(O), Auth(A) {}
  /// Where replies go; set before the first connection.
  void setWorker(transport::Worker *Worker) { W = Worker; }

  /// A new connection: its handshake's deadline starts now. Beyond
  /// --max-startups connections in their handshake, the oldest is closed.
  void accepted(transport::Peer P);
  /// A Hello on a connection (Served: it already has a session). The
  /// client, when it needs no proof; otherwise it is challenged or refused.
  std::optional<Admission> onHello(transport::Peer From,
                                   const protocol::Header &H,
                                   protocol::Reader &Body, bool Served);
  /// The answer to a challenge: the client, when its proof holds.
  std::optional<Admission> onAuthProof(transport::Peer From,
                                       const protocol::Header &H,
                                       protocol::Reader &Body);
  /// Refuse a client in its HelloReply (Code), and log why. Its connection
  /// closes at its handshake's deadline unless it is served.
  void refuse(transport::Peer From, const protocol::Header &H,
              const std::string &Client, int32_t Code, const std::string &Why);
  /// The connection is served or gone: no deadline, no handshake.
  void forget(transport::Peer P);
  /// Close connections whose handshake did not end in time.
  void dropLate();
  /// A connection's deadline is pending (the supervisor then wakes sooner).
  bool waiting() const { return !Deadlines.empty(); }

private:
  /// Between the challenge and the client's proof.
  struct Challenged {
    PendingAuth Auth;
    protocol::Hello Hi;
  };

  const ServerOptions &Opts;
  const Authenticator &Auth;
  transport::Worker *W = nullptr;
  std::map<transport::Peer, Challenged> Pending;
  /// Connections not served yet, and since when.
  std::map<transport::Peer, std::chrono::steady_clock::time_point> Deadlines;
  /// Closed for --max-startups since the last warning, and when the next may
  /// be.
  size_t Crowded = 0;
  std::chrono::steady_clock::time_point NextCrowdedReport;
};

} // namespace ompdpu::server
