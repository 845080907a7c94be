//===- transport.h - Active messages and bulk data --------------*- C++ -*-===//
//
// The seam between the layers above and UCX, the only code that knows UCX
// (ucx_worker.cpp). Above it, a Peer is an opaque handle, a message is a
// control frame plus optional bulk data, and bulk data can be landed
// straight into its destination buffer (UCX rendezvous: zero copy).
//
// A Worker is not thread-safe: callers serialise access (the plugin with a
// mutex per device, the server by owning it from one thread).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/status.h"
#include "transport/pending_sockets.h"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace ompdpu::transport {

/// An opaque handle on a connected peer (a UCX endpoint).
using Peer = void *;

/// Bulk data that arrived with a message and has not been consumed yet.
struct BulkData {
  void *Desc = nullptr;    ///< UCX data pointer/descriptor (null: no data)
  size_t Length = 0;       ///< bytes of bulk data
  bool Rendezvous = false; ///< true: still on the sender, fetch with receive()
  bool Persistent = false; ///< true: eager bytes kept alive until release()
};

/// Called for each incoming message. Return true to keep Data (and later
/// call Worker::receive or Worker::release on it), false to let it go.
using MessageHandler = std::function<bool(const uint8_t *Ctrl, size_t CtrlLen,
                                          const BulkData &Data, Peer From)>;
/// Called once when an operation finishes, successfully or not.
using Completion = std::function<void(const Status &)>;
/// Called when a peer fails (connection lost, peer died).
using PeerErrorHandler = std::function<void(Peer, const Status &)>;

/// Resolved "host:port" endpoint.
struct SockAddress {
  std::string Host;
  uint16_t Port = 0;
};

/// The transports (UCX_TLS syntax) of a session's context, chosen alike by
/// both sides: on one machine shared memory only, so that no TCP interface
/// is polled on the hot path, and POSIX segments (mode 0600) rather than
/// System V ones (UCX makes those readable by the owner's group); on one
/// machine but under another account (whose shared-memory segments UCX makes
/// the owner's alone) TCP; otherwise UCX's choice ("").
inline const char *sessionTransports(bool SameHost, bool OtherAccount = false) {
  return SameHost ? "posix,cma,self" : OtherAccount ? "tcp,self" : "";
}

/// What the layers above need of a transport: active messages with bulk
/// data, landed in place. UcxWorker (ucx_worker.cpp) is the implementation;
/// MemoryNetwork (memory_worker.h) an in-memory one for unit tests.
class Worker {
public:
  /// Create a UCX context and worker.
  /// Transports, when given, restricts UCX to them (UCX_TLS syntax): peers on
  /// the same machine use shared memory only, so that no TCP interface is
  /// polled.
  /// With SenderCopies, large messages this worker sends are pushed by it
  /// (rendezvous "put": cma or RDMA writes issued here) instead of pulled by
  /// the receiver: the DPU side does the copying in both directions.
  static Expected<std::unique_ptr<Worker>>
  create(const std::string &Transports = "", bool SenderCopies = false);
  /// A worker for a listener (a server's supervisor): a restarted server
  /// may listen on the same port at once, while the connections its
  /// predecessor closed are in TIME-WAIT (SO_REUSEADDR; a port another
  /// process listens on is still refused).
  static Expected<std::unique_ptr<Worker>> createListening();
  virtual ~Worker() = default;
  Worker(const Worker &) = delete;
  Worker &operator=(const Worker &) = delete;

  /// Install the handler for every incoming message.
  void setHandler(MessageHandler H) { Handler = std::move(H); }
  /// Install the handler for failures of any peer.
  void setPeerErrorHandler(PeerErrorHandler H) { OnPeerError = std::move(H); }

  /// Connections the next listen() accepts may wait this long, and so many,
  /// for their connection request (pending_sockets.h).
  virtual void limitPending(const PendingLimits &L) { (void)L; }
  /// Listen on Addr (port 0: any free port); returns the bound port.
  /// Accepted peers are reported through OnAccept from progress().
  virtual Expected<uint16_t> listen(const SockAddress &Addr,
                                    std::function<void(Peer)> OnAccept) = 0;
  /// Connect to a listener. Failures arrive later through the error handler.
  virtual Expected<Peer> connect(const SockAddress &Addr) = 0;
  /// Connect to a worker by its packed address. Without DetectPeerFailure
  /// UCX may use transports that cannot report a dead peer (on one host:
  /// cma, the zero-copy shared-memory path); use such endpoints only beside
  /// one that detects failures.
  virtual Expected<Peer> connectToWorker(const std::vector<uint8_t> &Address,
                                         bool DetectPeerFailure = true) = 0;
  /// This worker's packed address.
  virtual std::vector<uint8_t> address() const = 0;
  /// Close a peer without waiting for outstanding operations.
  virtual void closePeer(Peer P) = 0;
  /// The transport's description of the endpoint (lanes, transports,
  /// protocol thresholds): shows which transport carries bulk data.
  virtual std::string describe(Peer P) const = 0;

  /// Send a message only if it can leave at once (small messages, the hot
  /// path: no request, no allocation); true when it left. False asks the
  /// caller to use send(), which also reports errors. Without NeedsAnswer
  /// the receiver gets no sender endpoint (8 bytes less on the wire, no
  /// endpoint lookup): for replies.
  virtual bool trySend(Peer To, const void *Ctrl, size_t CtrlLen,
                       const void *Data, size_t Len,
                       bool NeedsAnswer = true) = 0;
  /// Send a control frame and optional bulk data (Data must stay valid until
  /// Done runs). Done may run before send() returns.
  virtual void send(Peer To, const std::vector<uint8_t> &Ctrl, const void *Data,
                    size_t Len, Completion Done, bool NeedsAnswer = true) = 0;
  /// Land bulk data in Dst (Dst must hold Data.Length bytes); zero copy for
  /// rendezvous data. Done may run before receive() returns.
  virtual void receive(const BulkData &Data, void *Dst, Completion Done) = 0;
  /// Drop bulk data that was kept but will not be received.
  virtual void release(const BulkData &Data) = 0;

  /// Make progress; returns nonzero when something happened.
  virtual unsigned progress() = 0;
  /// Block until there is something to progress, a signal(), or TimeoutMs.
  virtual void wait(int TimeoutMs) = 0;
  /// Wake a thread blocked in wait() (thread-safe).
  virtual void signal() = 0;
  /// For callers that poll several descriptors: arm the worker's event fd;
  /// false means events are already pending (progress instead of sleeping).
  virtual bool arm() = 0;
  /// The descriptor that becomes readable when the worker has work.
  virtual int eventFd() const = 0;
  /// Number of operations still in flight.
  size_t inFlight() const { return Pending; }

protected:
  Worker() = default;
  MessageHandler Handler;
  PeerErrorHandler OnPeerError;
  size_t Pending = 0;
};

/// Transfers at least this big take a pair's bulk endpoint (rendezvous
/// sizes).
constexpr size_t kBulkThreshold = 8192;

/// Two endpoints to one worker: Control detects the peer's failure, Bulk
/// does not, so that UCX may carry large transfers on transports that
/// cannot report a dead peer (on one host: cma, zero copy between
/// processes); Control watches over both. Bulk is null when it could not
/// be made (Control then carries everything).
struct EndpointPair {
  Peer Control = nullptr;
  Peer Bulk = nullptr;
  /// The endpoint for a transfer of Bytes.
  Peer forBytes(uint64_t Bytes) const {
    return Bytes >= kBulkThreshold && Bulk ? Bulk : Control;
  }
};

/// Connect a pair to the worker at Address.
inline Expected<EndpointPair> connectPair(Worker &W,
                                          const std::vector<uint8_t> &Address) {
  auto Control = W.connectToWorker(Address);
  if (!Control)
    return Control.status();
  EndpointPair P;
  P.Control = *Control;
  if (auto Bulk = W.connectToWorker(Address, /*DetectPeerFailure=*/false))
    P.Bulk = *Bulk;
  return P;
}

} // namespace ompdpu::transport
