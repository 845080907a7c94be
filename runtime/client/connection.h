//===- connection.h - Protocol client for one DPU server --------*- C++ -*-===//
//
// The client half of the protocol: a connection to one server (supervisor
// plus this client's session), on which any number of host threads issue
// requests at once. Requests return a Ticket at once; wait() makes progress
// until the reply arrives, the server is found dead (UCX reports the peer's
// failure), or it stays silent past the response timeout (heartbeats detect
// a frozen server). No UCX type appears here.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "client/handshake.h"
#include "client/health_policy.h"
#include "client/pending.h"
#include "common/config.h"
#include "common/status.h"
#include "protocol/messages.h"
#include "transport/transport.h"

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ompdpu::client {

/// A connection to one ompdpu-server.
class Connection {
public:
  /// Makes the connection's transport workers (for the given UCX_TLS
  /// list); tests pass one that makes in-memory workers.
  using WorkerFactory =
      std::function<Expected<std::unique_ptr<transport::Worker>>(
          const std::string &Transports)>;

  /// Connect, handshake (refusing other ISAs when WantIsa is set) and
  /// attach to the new session.
  static Expected<std::unique_ptr<Connection>>
  open(const DeviceAddress &Addr, const ClientConfig &Cfg,
       const std::string &WantIsa = "", WorkerFactory Make = {});
  /// open() in two steps, for connecting to many servers from one thread:
  /// start() sends the handshake without waiting; finish() waits for it
  /// (until Deadline) and attaches to the session. No thread is started, so
  /// this works while the caller holds the dynamic loader's lock (plugins
  /// are initialised from a library constructor under dlopen).
  static Expected<std::unique_ptr<Connection>>
  start(const DeviceAddress &Addr, const ClientConfig &Cfg,
        const std::string &WantIsa = "", WorkerFactory Make = {});
  Status finish(std::chrono::steady_clock::time_point Deadline);
  /// When a handshake started now must have finished.
  static std::chrono::steady_clock::time_point
  connectDeadline(const ClientConfig &Cfg);
  /// Says Bye to the server when still connected.
  ~Connection();

  /// Facts from the handshake.
  const ServerInfo &info() const { return Info; }
  /// The address this connection was opened with.
  const DeviceAddress &address() const { return Addr; }

  Ticket alloc(uint64_t Size, int32_t Kind);
  Ticket free(uint64_t Ptr);
  /// Copy Size bytes from host Src to device Dst; Src must stay valid until
  /// the ticket completes.
  Ticket submit(uint64_t Dst, const void *Src, uint64_t Size, uint32_t Queue,
                uint32_t Seq);
  /// A queue's small operations in one message: copy In (its bytes back to
  /// back in InBytes, valid until the ticket completes) to the device, run
  /// Kernel (0: none) with Args, then copy Out back to the host ranges Into
  /// (one per out piece, in order).
  Ticket batch(const std::vector<protocol::Piece> &In, const void *InBytes,
               uint64_t InLen, uint16_t Kernel, const uint64_t *Args,
               size_t NumArgs, const std::vector<protocol::Piece> &Out,
               std::vector<HostRange> Into, uint32_t Queue, uint32_t Seq);
  /// Copy Size bytes from device Src to host Dst (zero copy for large sizes).
  Ticket retrieve(void *Dst, uint64_t Src, uint64_t Size, uint32_t Queue,
                  uint32_t Seq);
  /// Load a device image; the reply's Payload holds the entry table.
  Ticket loadImage(const void *Image, uint64_t Size);
  /// Run a kernel, named by its handle from the entry table.
  /// Args: Count pointer-sized arguments, offsets already added.
  Ticket run(uint16_t Kernel, const uint64_t *Args, size_t Count,
             uint32_t Queue, uint32_t Seq);
  /// Have this server push device bytes to another server's session.
  Ticket exchange(uint64_t Src, uint64_t Size, const ServerInfo &Dst,
                  uint64_t DstPtr, uint32_t Queue, uint32_t Seq);
  /// Completes once operation Seq of Queue has its host -> device bytes in
  /// place (a Batch's kernel may still run).
  Ticket landed(uint32_t Queue, uint32_t Seq);
  /// Liveness check.
  Ticket ping();
  /// Copy Size bytes from From, which T's reply fills, to To once T has
  /// succeeded: at once if it has, else before T is Done. Nothing is copied
  /// if T fails.
  void copyOnArrival(const Ticket &T, const void *From, void *To,
                     uint64_t Size);
  /// OMPDPU_TRACE is set.
  bool tracing() const { return Trace; }
  /// Requests of this type completed so far (counted with OMPDPU_TRACE).
  unsigned long completed(protocol::MsgType Type) const {
    std::lock_guard<std::mutex> L(M);
    return TraceStats[static_cast<unsigned>(Type)].second;
  }

  /// Make progress until T completes; returns its result.
  Status wait(const Ticket &T);
  /// Make progress until T completes (true) or Deadline passes (false).
  bool waitUntil(const Ticket &T,
                 std::chrono::steady_clock::time_point Deadline);
  /// False once the server is known to be gone.
  bool alive() const { return !Failed.load(); }
  /// Why the connection failed.
  Status failure() const;

private:
  Connection(const DeviceAddress &A, const ClientConfig &C);
  /// Which endpoint a request travels on.
  enum class Lane { Supervisor, Session, Bulk };
  /// Into: where the reply's bytes land (see PendingOp::Into).
  template <typename Body>
  Ticket issue(protocol::MsgType Type, const Body &B, uint32_t Queue,
               uint32_t Seq, const void *Data, uint64_t Len, Lane L,
               std::vector<HostRange> Into = {}, uint16_t Operand = 0);
  /// Land a reply's bytes (Data) where T wants them; false when they are
  /// not at hand yet (T completes later).
  bool landReplyBytes(const Ticket &T, const transport::BulkData &Data);
  bool onMessage(const uint8_t *Ctrl, size_t Len,
                 const transport::BulkData &Data);
  void completeOp(const Ticket &T, const Status &S);
  void failConnection(const Status &S);
  void checkHealth();
  void progressLocked();
  void installHandlers(transport::Worker &Wk);
  Status sendHello(const std::string &WantIsa);
  Status completeHandshake(std::chrono::steady_clock::time_point Deadline);
  Ticket HelloTicket; ///< the handshake under way (between start and finish)

  DeviceAddress Addr;
  ClientConfig Cfg;
  ServerInfo Info;
  WorkerFactory MakeWorker;
  /// Two workers: SupW talks to the supervisor (over TCP sockets); W to the
  /// session, restricted to shared memory when the server is on this
  /// machine, so that the hot path never polls a TCP interface.
  std::unique_ptr<transport::Worker> SupW;
  std::unique_ptr<transport::Worker> W;
  unsigned ProgressCount = 0;
  void *SupervisorEp = nullptr;
  void *SessionEp = nullptr;
  /// Second endpoint to the session for large transfers: it may use
  /// transports without peer-failure detection (cma: zero-copy between
  /// processes); SessionEp watches over it.
  void *BulkEp = nullptr;

  mutable std::mutex M; // guards the worker and everything below
  PendingTable Pending;
  std::vector<uint8_t> SendBuf; ///< frames are encoded here
  uint32_t NextId = 1;
  /// A fresh request id (ids wrap around; 0 is reserved for heartbeats).
  uint32_t newId() {
    uint32_t Id = NextId++;
    if (NextId == 0)
      NextId = 1;
    return Id;
  }
  /// OMPDPU_TRACE: per message type, total microseconds and count.
  bool Trace = false;
  std::array<std::pair<double, unsigned long>, 32> TraceStats{};
  std::atomic<bool> Failed{false};
  Status FailStatus;
  std::string SessionExitMessage;
  HealthPolicy Health; ///< when silence means the server is gone
  std::vector<std::function<void()>> Deferred;
};

} // namespace ompdpu::client
