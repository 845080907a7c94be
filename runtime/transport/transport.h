//===- transport.h - Active messages and bulk data over UCX -----*- C++ -*-===//
//
// The only place that knows UCX. Above it, a Peer is an opaque handle, a
// message is a control frame plus optional bulk data, and bulk data can be
// landed straight into its destination buffer (UCX rendezvous: zero copy).
// Following UCX's ucp_client_server.c, listener callbacks only queue the
// connection request; endpoints are created from the progress loop.
//
// A Worker is not thread-safe: callers serialise access (the plugin with a
// mutex per device, the server by owning it from one thread).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/status.h"

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
/// is polled on the hot path; otherwise UCX's choice ("").
inline const char *sessionTransports(bool SameHost) {
  return SameHost ? "sm,self" : "";
}

/// One UCX context and worker, with the active-message handler installed.
class Worker {
public:
  /// Create a context and worker.
  /// Transports, when given, restricts UCX to them (UCX_TLS syntax): peers on
  /// the same machine use "sm,self", so that no TCP interface is polled.
  /// With SenderCopies, large messages this worker sends are pushed by it
  /// (rendezvous "put": cma or RDMA writes issued here) instead of pulled by
  /// the receiver: the DPU side does the copying in both directions.
  static Expected<std::unique_ptr<Worker>>
  create(const std::string &Transports = "", bool SenderCopies = false);
  ~Worker();
  Worker(const Worker &) = delete;
  Worker &operator=(const Worker &) = delete;

  /// Install the handler for every incoming message.
  void setHandler(MessageHandler H) { Handler = std::move(H); }
  /// Install the handler for failures of any peer.
  void setPeerErrorHandler(PeerErrorHandler H) { OnPeerError = std::move(H); }

  /// Listen on Addr (port 0: any free port); returns the bound port.
  /// Accepted peers are reported through OnAccept from progress().
  Expected<uint16_t> listen(const SockAddress &Addr,
                            std::function<void(Peer)> OnAccept);
  /// Connect to a listener. Failures arrive later through the error handler.
  Expected<Peer> connect(const SockAddress &Addr);
  /// Connect to a worker by its packed address. Without DetectPeerFailure
  /// UCX may use transports that cannot report a dead peer (on one host:
  /// cma, the zero-copy shared-memory path); use such endpoints only beside
  /// one that detects failures.
  Expected<Peer> connectToWorker(const std::vector<uint8_t> &Address,
                                 bool DetectPeerFailure = true);
  /// This worker's packed address.
  std::vector<uint8_t> address() const;
  /// Close a peer without waiting for outstanding operations.
  void closePeer(Peer P);
  /// UCX's description of the endpoint (lanes, transports, protocol
  /// thresholds): shows which transport carries bulk data, e.g. cma.
  std::string describe(Peer P) const;

  /// Send a message only if UCX can take it at once (small messages, the
  /// hot path: no request, no allocation); true when it left. False asks
  /// the caller to use send(), which also reports errors. Without
  /// NeedsAnswer the receiver gets no sender endpoint (8 bytes less on the
  /// wire, no endpoint lookup): for replies.
  bool trySend(Peer To, const void *Ctrl, size_t CtrlLen, const void *Data,
               size_t Len, bool NeedsAnswer = true);
  /// Send a control frame and optional bulk data (Data must stay valid until
  /// Done runs). Done may run before send() returns.
  void send(Peer To, const std::vector<uint8_t> &Ctrl, const void *Data,
            size_t Len, Completion Done, bool NeedsAnswer = true);
  /// Land bulk data in Dst (Dst must hold Data.Length bytes); zero copy for
  /// rendezvous data. Done may run before receive() returns.
  void receive(const BulkData &Data, void *Dst, Completion Done);
  /// Drop bulk data that was kept but will not be received.
  void release(const BulkData &Data);

  /// Make progress; returns nonzero when something happened.
  unsigned progress();
  /// Block until there is something to progress, a signal(), or TimeoutMs.
  void wait(int TimeoutMs);
  /// Wake a thread blocked in wait() (thread-safe).
  void signal();
  /// For callers that poll several descriptors: arm the worker's event fd;
  /// false means events are already pending (progress instead of sleeping).
  bool arm();
  /// The descriptor that becomes readable when the worker has work.
  int eventFd() const;
  /// Number of operations still in flight.
  size_t inFlight() const { return Pending; }

private:
  Worker() = default;
  struct Impl;
  std::unique_ptr<Impl> I;
  MessageHandler Handler;
  PeerErrorHandler OnPeerError;
  size_t Pending = 0;
  friend struct WorkerCallbacks;
};

} // namespace ompdpu::transport
