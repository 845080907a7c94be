//===- endpoints.cpp - A connection's workers and endpoints ---------------===//
#include "client/endpoints.h"

#include "protocol/messages.h"

#include <poll.h>

namespace ompdpu::client {

Endpoints::Endpoints(WorkerFactory M, transport::MessageHandler OnMessage,
                     transport::PeerErrorHandler OnError)
    : Make(M ? std::move(M)
             : [](const std::string
                      &Tls) { return transport::Worker::create(Tls); }),
      OnMessage(std::move(OnMessage)), OnError(std::move(OnError)) {}

Expected<std::unique_ptr<transport::Worker>>
Endpoints::make(const std::string &Tls) {
  auto Made = Make(Tls);
  if (Made) {
    (*Made)->setHandler(OnMessage);
    (*Made)->setPeerErrorHandler(OnError);
  }
  return Made;
}

Status Endpoints::connectSupervisor(const DeviceAddress &Addr) {
  auto Made = make("");
  if (!Made)
    return Made.status();
  SupW = std::move(*Made);
  auto Sup = SupW->connect({Addr.Host, Addr.Port});
  if (!Sup)
    return Sup.status().withContext("cannot connect");
  SupervisorEp = *Sup;
  return Status();
}

Status Endpoints::connectSession(const std::vector<uint8_t> &Address,
                                 const std::string &Transports) {
  auto Made = make(Transports);
  if (!Made)
    return Made.status();
  W = std::move(*Made);
  auto Pair = transport::connectPair(*W, Address);
  if (!Pair)
    return Pair.status().withContext("cannot reach session");
  if (!Pair->Bulk)
    return Status::error("cannot reach session: no bulk endpoint");
  Session = *Pair;
  return Status();
}

Endpoints::Role Endpoints::roleOf(transport::Peer P) const {
  if (P && (P == Session.Control || P == Session.Bulk))
    return Role::Session;
  if (P && P == SupervisorEp)
    return Role::Supervisor;
  return Role::Unknown;
}

void Endpoints::sleep(int Ms) {
  // Bounded: another thread may consume our wake-up, and health checks
  // must run even when nothing arrives.
  pollfd P[2] = {{SupW->eventFd(), POLLIN, 0},
                 {W ? W->eventFd() : -1, POLLIN, 0}};
  poll(P, W ? 2 : 1, Ms);
}

void Endpoints::heartbeat() {
  protocol::Header H;
  H.Type = protocol::MsgType::Ping;
  H.RequestId = protocol::kHeartbeatId;
  // The session may be busy in a kernel; the supervisor answers for the
  // server as a whole. Silence from both means the server is frozen.
  auto Ping = protocol::frame(H, protocol::Empty());
  if (hasSession())
    W->send(Session.Control, Ping, nullptr, 0, nullptr);
  SupW->send(SupervisorEp, Ping, nullptr, 0, nullptr);
}

std::string Endpoints::describeBulk() const {
  return W && Session.Bulk ? W->describe(Session.Bulk) : "no bulk endpoint";
}

void Endpoints::close() {
  if (W) {
    W->setPeerErrorHandler(nullptr);
    W->closePeer(Session.Bulk);
    W->closePeer(Session.Control);
  }
  if (SupW) {
    SupW->setPeerErrorHandler(nullptr);
    SupW->closePeer(SupervisorEp);
  }
  Session = {};
  SupervisorEp = nullptr;
}

} // namespace ompdpu::client
