//===- memory_worker.h - An in-memory transport for unit tests --*- C++ -*-===//
//
// Workers of one MemoryNetwork exchange messages through queues in this
// process: what the layers above the transport do can be tested without a
// UCX peer, deterministically (a message arrives only when its receiver
// calls progress()), and failures can be injected (a peer lost). One lock
// serialises the whole network, so its workers may live on several threads.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "transport/transport.h"

#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ompdpu::transport {

class MemoryWorker;

/// The workers that can reach each other.
class MemoryNetwork {
public:
  /// A new worker on this network (the network must outlive it).
  std::unique_ptr<MemoryWorker> create();
  /// Fail every endpoint of the worker at Address, on both sides, as a
  /// peer that died would: their error handlers run in the next progress().
  void kill(const std::vector<uint8_t> &Address);

private:
  friend class MemoryWorker;
  MemoryWorker *find(const std::vector<uint8_t> &Address) const;
  mutable std::recursive_mutex M; // handlers may send from progress()
  std::map<std::vector<uint8_t>, MemoryWorker *> Workers;
  std::map<std::string, MemoryWorker *> Listeners; // by "host:port"
  uint32_t NextId = 1;
  uint16_t NextPort = 40000;
};

class MemoryWorker final : public Worker {
public:
  ~MemoryWorker() override;
  Expected<uint16_t> listen(const SockAddress &Addr,
                            std::function<void(Peer)> OnAccept) override;
  Expected<Peer> connect(const SockAddress &Addr) override;
  Expected<Peer> connectToWorker(const std::vector<uint8_t> &Address,
                                 bool DetectPeerFailure) override;
  std::vector<uint8_t> address() const override { return Address; }
  void closePeer(Peer P) override;
  std::string describe(Peer P) const override;
  bool trySend(Peer To, const void *Ctrl, size_t CtrlLen, const void *Data,
               size_t Len, bool NeedsAnswer) override;
  void send(Peer To, const std::vector<uint8_t> &Ctrl, const void *Data,
            size_t Len, Completion Done, bool NeedsAnswer) override;
  void receive(const BulkData &Data, void *Dst, Completion Done) override;
  void release(const BulkData &Data) override;
  unsigned progress() override;
  void wait(int) override {}
  void signal() override { ++Signals; }
  bool arm() override {
    std::lock_guard<std::recursive_mutex> G(Net.M);
    return Inbox.empty() && Later.empty();
  }
  int eventFd() const override { return -1; }

  /// Bulk data of at least this many bytes arrives as rendezvous data (to
  /// be fetched with receive()); smaller data is eager.
  size_t RendezvousThreshold = 8192;
  /// Messages that arrived and were not yet delivered.
  size_t queued() const {
    std::lock_guard<std::recursive_mutex> G(Net.M);
    return Inbox.size();
  }
  /// Bulk data kept by handlers and neither received nor released.
  size_t heldBulk() const {
    std::lock_guard<std::recursive_mutex> G(Net.M);
    return Held.size();
  }
  std::atomic<unsigned> Signals{0};

private:
  friend class MemoryNetwork;
  explicit MemoryWorker(MemoryNetwork &Net, std::vector<uint8_t> Address)
      : Net(Net), Address(std::move(Address)) {}
  /// One direction of a connection: this worker's handle on a peer.
  struct Endpoint {
    MemoryWorker *Remote = nullptr;
    Endpoint *Back = nullptr; ///< the remote's endpoint to us
    bool Failed = false;
  };
  struct Message {
    std::vector<uint8_t> Ctrl;
    std::shared_ptr<std::vector<uint8_t>> Data;
    Endpoint *From = nullptr; ///< null: no answer wanted
  };
  Endpoint *newEndpoint(MemoryWorker *Remote);
  Endpoint *endpointOf(Peer P) const;
  void deliver(Message M) { Inbox.push_back(std::move(M)); }
  void failEndpoint(Endpoint *E);
  MemoryNetwork &Net;
  std::vector<uint8_t> Address;
  std::vector<std::unique_ptr<Endpoint>> Endpoints;
  std::deque<Message> Inbox;
  std::deque<std::function<void()>> Later; ///< completions and errors
  std::map<const void *, std::shared_ptr<std::vector<uint8_t>>> Held;
  std::function<void(Peer)> OnAccept;
  std::string ListenKey;
};

} // namespace ompdpu::transport
