//===- memory_worker.cpp - An in-memory transport for unit tests ----------===//
#include "transport/memory_worker.h"

#include "common/log.h"

#include <algorithm>
#include <cstring>

namespace ompdpu::transport {

std::unique_ptr<MemoryWorker> MemoryNetwork::create() {
  std::lock_guard<std::recursive_mutex> G(M);
  uint32_t Id = NextId++;
  std::vector<uint8_t> Address(4);
  std::memcpy(Address.data(), &Id, 4);
  std::unique_ptr<MemoryWorker> W(new MemoryWorker(*this, Address));
  Workers[Address] = W.get();
  return W;
}

MemoryWorker *MemoryNetwork::find(const std::vector<uint8_t> &Address) const {
  auto It = Workers.find(Address);
  return It == Workers.end() ? nullptr : It->second;
}

void MemoryNetwork::kill(const std::vector<uint8_t> &Address) {
  std::lock_guard<std::recursive_mutex> G(M);
  MemoryWorker *Dead = find(Address);
  if (!Dead)
    return;
  for (auto &E : Dead->Endpoints) {
    Dead->failEndpoint(E.get());
    if (E->Back && E->Remote)
      E->Remote->failEndpoint(E->Back);
  }
}

MemoryWorker::~MemoryWorker() {
  std::lock_guard<std::recursive_mutex> G(Net.M);
  Net.Workers.erase(Address);
  if (!ListenKey.empty())
    Net.Listeners.erase(ListenKey);
  // Peers see their endpoints to us fail, as after a crash.
  for (auto &E : Endpoints)
    if (E->Back && E->Remote && !E->Failed) {
      E->Back->Back = nullptr;
      E->Remote->failEndpoint(E->Back);
    }
}

MemoryWorker::Endpoint *MemoryWorker::newEndpoint(MemoryWorker *Remote) {
  Endpoints.push_back(std::make_unique<Endpoint>());
  Endpoints.back()->Remote = Remote;
  return Endpoints.back().get();
}

MemoryWorker::Endpoint *MemoryWorker::endpointOf(Peer P) const {
  for (const auto &E : Endpoints)
    if (E.get() == P)
      return E.get();
  return nullptr;
}

void MemoryWorker::failEndpoint(Endpoint *E) {
  if (E->Failed)
    return;
  E->Failed = true;
  Later.push_back([this, E] {
    if (OnPeerError)
      OnPeerError(E, Status::error(ErrorCode::PeerLost,
                                   "peer lost (in-memory network)"));
  });
}

Expected<uint16_t> MemoryWorker::listen(const SockAddress &Addr,
                                        std::function<void(Peer)> Accept) {
  std::lock_guard<std::recursive_mutex> G(Net.M);
  uint16_t Port = Addr.Port ? Addr.Port : Net.NextPort++;
  ListenKey = Addr.Host + ":" + std::to_string(Port);
  if (Net.Listeners.count(ListenKey))
    return Status::error("address in use: " + ListenKey);
  Net.Listeners[ListenKey] = this;
  OnAccept = std::move(Accept);
  return Port;
}

Expected<Peer> MemoryWorker::connect(const SockAddress &Addr) {
  std::lock_guard<std::recursive_mutex> G(Net.M);
  auto It = Net.Listeners.find(Addr.Host + ":" + std::to_string(Addr.Port));
  if (It == Net.Listeners.end())
    return Status::error(ErrorCode::Unreachable, "nothing listens on " +
                                                     Addr.Host + ":" +
                                                     std::to_string(Addr.Port));
  Expected<Peer> P = connectToWorker(It->second->Address, true);
  if (P) {
    MemoryWorker *Remote = It->second;
    Endpoint *Back = static_cast<Endpoint *>(*P)->Back;
    Remote->Later.push_back([Remote, Back] {
      if (Remote->OnAccept)
        Remote->OnAccept(Back);
    });
  }
  return P;
}

Expected<Peer> MemoryWorker::connectToWorker(const std::vector<uint8_t> &A,
                                             bool) {
  std::lock_guard<std::recursive_mutex> G(Net.M);
  MemoryWorker *Remote = Net.find(A);
  if (!Remote)
    return Status::error(ErrorCode::Unreachable, "no worker at that address");
  Endpoint *Mine = newEndpoint(Remote);
  Endpoint *Theirs = Remote->newEndpoint(this);
  Mine->Back = Theirs;
  Theirs->Back = Mine;
  return static_cast<Peer>(Mine);
}

void MemoryWorker::closePeer(Peer P) {
  std::lock_guard<std::recursive_mutex> G(Net.M);
  Endpoint *E = endpointOf(P);
  if (!E)
    return;
  E->Failed = true; // no error handler for a close of our own
  if (E->Back && E->Remote)
    E->Remote->failEndpoint(E->Back);
}

std::string MemoryWorker::describe(Peer P) const {
  std::lock_guard<std::recursive_mutex> G(Net.M);
  return endpointOf(P) ? "in-memory endpoint" : "unknown endpoint";
}

bool MemoryWorker::trySend(Peer To, const void *Ctrl, size_t CtrlLen,
                           const void *Data, size_t Len, bool NeedsAnswer) {
  std::lock_guard<std::recursive_mutex> G(Net.M);
  Endpoint *E = endpointOf(To);
  if (!E || E->Failed || !E->Remote || Len >= RendezvousThreshold)
    return false;
  send(To,
       std::vector<uint8_t>(static_cast<const uint8_t *>(Ctrl),
                            static_cast<const uint8_t *>(Ctrl) + CtrlLen),
       Data, Len, nullptr, NeedsAnswer);
  return true;
}

void MemoryWorker::send(Peer To, const std::vector<uint8_t> &Ctrl,
                        const void *Data, size_t Len, Completion Done,
                        bool NeedsAnswer) {
  std::lock_guard<std::recursive_mutex> G(Net.M);
  Endpoint *E = endpointOf(To);
  if (!E || E->Failed || !E->Remote) {
    ++Pending;
    Later.push_back([this, Done] {
      --Pending;
      if (Done)
        Done(Status::error(ErrorCode::PeerLost,
                           "send failed: peer lost (in-memory network)"));
    });
    return;
  }
  Message M;
  M.Ctrl = Ctrl;
  if (Len)
    M.Data = std::make_shared<std::vector<uint8_t>>(
        static_cast<const uint8_t *>(Data),
        static_cast<const uint8_t *>(Data) + Len);
  M.From = NeedsAnswer ? E->Back : nullptr;
  E->Remote->deliver(std::move(M));
  // The bytes are copied: the send is complete.
  if (Done) {
    ++Pending;
    Later.push_back([this, Done] {
      --Pending;
      Done(Status());
    });
  }
}

void MemoryWorker::receive(const BulkData &Data, void *Dst, Completion Done) {
  std::lock_guard<std::recursive_mutex> G(Net.M);
  auto It = Held.find(Data.Desc);
  if (It == Held.end()) {
    if (Done)
      Done(Status::error("receive of unknown bulk data"));
    return;
  }
  std::memcpy(Dst, It->second->data(), It->second->size());
  Held.erase(It);
  ++Pending;
  Later.push_back([this, Done] {
    --Pending;
    if (Done)
      Done(Status());
  });
}

void MemoryWorker::release(const BulkData &Data) {
  std::lock_guard<std::recursive_mutex> G(Net.M);
  Held.erase(Data.Desc);
}

unsigned MemoryWorker::progress() {
  std::lock_guard<std::recursive_mutex> G(Net.M);
  unsigned N = 0;
  std::deque<std::function<void()>> Now;
  Now.swap(Later);
  for (auto &F : Now) {
    F();
    ++N;
  }
  std::deque<Message> Arrived;
  Arrived.swap(Inbox);
  for (Message &M : Arrived) {
    ++N;
    BulkData B;
    if (M.Data) {
      B.Desc = M.Data->data();
      B.Length = M.Data->size();
      B.Rendezvous = B.Length >= RendezvousThreshold;
      B.Persistent = !B.Rendezvous;
    }
    bool Keep =
        Handler && Handler(M.Ctrl.data(), M.Ctrl.size(), B,
                           M.From && !M.From->Failed ? M.From : nullptr);
    if (Keep && M.Data)
      Held[M.Data->data()] = M.Data;
  }
  return N;
}

} // namespace ompdpu::transport
