//===- peer_links.cpp - Copies from this session to peer sessions ---------===//
#include "server/peer_links.h"

namespace ompdpu::server {

using namespace protocol;
using transport::Peer;

Reply PeerLinks::failure(const std::string &Why) {
  Reply Rep;
  Rep.Code = kErrPeer;
  Rep.Message = Why;
  return Rep;
}

Status PeerLinks::copy(const ExchangeOut &X, Done Then) {
  auto It = Links.find(X.PeerAddress);
  if (It == Links.end()) {
    auto NewPair = transport::connectPair(W, X.PeerAddress);
    if (!NewPair)
      return NewPair.status().withContext("cannot reach peer session");
    It = Links.emplace(X.PeerAddress, *NewPair).first;
  }
  Peer P = It->second.Control;
  Peer Via = It->second.forBytes(X.Size);
  Header H;
  H.Type = MsgType::PeerSubmit;
  H.RequestId = NextRequest++;
  if (NextRequest == 0)
    NextRequest = 1;
  PeerSubmit PS;
  PS.Token = X.DstToken;
  PS.DstPtr = X.DstPtr;
  PS.Size = X.Size;
  uint64_t Id = H.RequestId;
  Pending[Id] = {P, std::move(Then)};
  // Device bytes go straight from this session's memory to the peer's.
  W.send(Via, frame(H, PS), reinterpret_cast<const void *>(X.SrcPtr), X.Size,
         [this, Id](const Status &S) {
           if (S.ok())
             return;
           auto It = Pending.find(Id);
           if (It == Pending.end())
             return;
           Done D = std::move(It->second.second);
           Pending.erase(It);
           D(failure("copy to peer session failed: " + S.message()));
         });
  return Status();
}

bool PeerLinks::onReply(const Header &H, Reader &Body) {
  auto It = Pending.find(H.RequestId);
  if (It == Pending.end())
    return false;
  Reply Rep;
  if (!decodeBody(Body, Rep).ok())
    Rep = failure("malformed reply from peer session");
  Done D = std::move(It->second.second);
  Pending.erase(It);
  D(Rep);
  return true;
}

bool PeerLinks::onPeerError(Peer P, const Status &S) {
  bool Known = false;
  Peer Key = P; // copies in flight are keyed by the control endpoint
  for (auto It = Links.begin(); It != Links.end(); ++It)
    if (It->second.Control == P || It->second.Bulk == P) {
      // The caller closes P; the link's other endpoint goes with it.
      if (It->second.Bulk && It->second.Bulk != P)
        W.closePeer(It->second.Bulk);
      if (It->second.Control != P)
        W.closePeer(It->second.Control);
      Key = It->second.Control;
      Links.erase(It);
      Known = true;
      break;
    }
  std::vector<Done> Failed;
  for (auto It = Pending.begin(); It != Pending.end();) {
    if (It->second.first == Key) {
      Failed.push_back(std::move(It->second.second));
      It = Pending.erase(It);
      Known = true;
    } else {
      ++It;
    }
  }
  for (Done &D : Failed)
    D(failure("peer session lost: " + S.message()));
  return Known;
}

} // namespace ompdpu::server
