//===- endpoints.h - A connection's workers and endpoints -------*- C++ -*-===//
//
// Two workers: one talks to the supervisor (over TCP sockets), the other to
// the session, restricted to shared memory when the server is on this
// machine, so that the hot path never polls a TCP interface. The session
// has two endpoints: a control endpoint that detects the session's death,
// and a bulk endpoint that does not, so that UCX may use transports without
// peer-failure detection for large transfers (cma: zero copy between
// processes); the control endpoint watches over it. Not thread-safe: the
// connection serialises access.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/config.h"
#include "common/status.h"
#include "transport/transport.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ompdpu::client {

class Endpoints {
public:
  /// Makes a worker for the given UCX_TLS list ("": UCX's choice).
  using WorkerFactory =
      std::function<Expected<std::unique_ptr<transport::Worker>>(
          const std::string &Transports)>;
  /// Which endpoint a request travels on.
  enum class Lane { Supervisor, Session, Bulk };
  /// What a failed endpoint was.
  enum class Role { Supervisor, Session, Unknown };

  /// Every worker made gets these handlers.
  Endpoints(WorkerFactory Make, transport::MessageHandler OnMessage,
            transport::PeerErrorHandler OnError);
  /// Connect to the supervisor at Addr.
  Status connectSupervisor(const DeviceAddress &Addr);
  /// A worker for the session (with the session's transports) and both
  /// endpoints to it.
  Status connectSession(const std::vector<uint8_t> &Address,
                        const std::string &Transports);

  /// The endpoint of a lane (null: not connected).
  transport::Peer peer(Lane L) const {
    return L == Lane::Supervisor ? SupervisorEp
           : L == Lane::Bulk     ? Session.forBytes(transport::kBulkThreshold)
                                 : Session.Control;
  }
  transport::Worker &worker(Lane L) {
    return L == Lane::Supervisor ? *SupW : *W;
  }
  Role roleOf(transport::Peer P) const;
  bool hasSession() const { return W && Session.Control; }

  /// Progress the supervisor's worker (a system call per poll).
  void progressSupervisor() { SupW->progress(); }
  /// Progress the session's worker; nonzero when something happened.
  unsigned progressSession() { return W ? W->progress() : 0; }
  /// Arm both workers; false when events are pending already.
  bool arm() { return SupW->arm() && (!W || W->arm()); }
  /// Sleep until a worker has events or Ms pass.
  void sleep(int Ms);
  /// Ask both the session and the supervisor for a sign of life (answers
  /// to request id 0 are ignored: any answer proves it).
  void heartbeat();
  /// The transport's description of the bulk endpoint.
  std::string describeBulk() const;
  /// Close every endpoint without reporting errors.
  void close();
  /// Destroy the workers (after close(); their last callbacks may run).
  void reset() {
    W.reset();
    SupW.reset();
  }
  /// Forget the workers without destroying them (they belong to the
  /// process this one was fork()ed from).
  void abandon() {
    (void)W.release();
    (void)SupW.release();
  }

private:
  WorkerFactory Make;
  transport::MessageHandler OnMessage;
  transport::PeerErrorHandler OnError;
  std::unique_ptr<transport::Worker> SupW, W;
  transport::Peer SupervisorEp = nullptr;
  transport::EndpointPair Session;
  Expected<std::unique_ptr<transport::Worker>> make(const std::string &Tls);
};

} // namespace ompdpu::client
