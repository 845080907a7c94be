//===- peer_links.h - Copies from this session to peer sessions -*- C++ -*-===//
//
// A device-to-device copy between two DPUs goes straight from this
// session's memory to the peer session's (PeerSubmit, carrying the peer's
// token): one pair of endpoints per peer (control, which detects the
// peer's failure, and bulk, which UCX may serve zero copy), and the copies
// in flight with what to do when each is answered or its peer is lost.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/status.h"
#include "protocol/messages.h"
#include "transport/transport.h"

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

namespace ompdpu::server {

class PeerLinks {
public:
  using Done = std::function<void(const protocol::Reply &)>;
  explicit PeerLinks(transport::Worker &W) : W(W) {}

  /// Push X.Size bytes at X.SrcPtr (already checked) to the peer session
  /// X names; Then runs once with the peer's answer or the failure. An
  /// error here (the peer cannot be reached) means Then will not run.
  Status copy(const protocol::ExchangeOut &X, Done Then);
  /// A Reply that arrived: true when it answered one of our copies.
  bool onReply(const protocol::Header &H, protocol::Reader &Body);
  /// A failed endpoint: true when it was a peer's (its copies fail, and
  /// the link's other endpoint is closed; the caller closes P).
  bool onPeerError(transport::Peer P, const Status &S);

private:
  using Link = transport::EndpointPair;
  transport::Worker &W;
  uint32_t NextRequest = 1;
  /// Copies in flight by request id: the peer's control endpoint, and Then.
  std::map<uint64_t, std::pair<transport::Peer, Done>> Pending;
  std::map<std::vector<uint8_t>, Link> Links; // by the peer's address
  static protocol::Reply failure(const std::string &Why);
};

} // namespace ompdpu::server
