//===- request_link.h - Requests to one server and their replies -*- C++ -*-=//
//
// The engine under a Connection: requests leave on an endpoint and get a
// Ticket at once; replies are matched to their tickets by request id, their
// bytes landed where the request wants them; wait() makes progress until a
// ticket completes, the server is found dead (the transport reports the
// peer's failure, or the supervisor says the session ended), or it stays
// silent past the response timeout (heartbeats detect a frozen server).
// Any number of host threads may issue and wait at once.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "client/endpoints.h"
#include "client/fork_guard.h"
#include "client/health_policy.h"
#include "client/output_cursor.h"
#include "client/pending.h"
#include "client/timeline.h"
#include "client/trace_stats.h"
#include "common/config.h"
#include "common/status.h"
#include "protocol/messages.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace ompdpu::client {

class RequestLink {
public:
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
    return Stats.count(Type);
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
  /// The address this connection was opened with.
  const DeviceAddress &address() const { return Addr; }

protected:
  RequestLink(const DeviceAddress &A, const ClientConfig &C,
              Endpoints::WorkerFactory Make);
  ~RequestLink();
  using Lane = Endpoints::Lane;
  /// Send a request on lane Via; Into: where the reply's bytes land (see
  /// PendingOp::Into).
  template <typename Body>
  Ticket issue(protocol::MsgType Type, const Body &B, uint32_t Queue,
               uint32_t Seq, const void *Data, uint64_t Len, Lane Via,
               std::vector<HostRange> Into = {}, uint16_t Operand = 0) {
    if (Fork.inherited()) // before M, which a parent's thread may have held
      return refusedInChild(Type);
    std::lock_guard<std::mutex> L(M);
    if (Failed || !Ends.peer(Via) || Queue > protocol::kMaxQueueId)
      return refused(Type, Queue, Ends.peer(Via) != nullptr);
    protocol::Header H;
    H.Type = Type;
    H.RequestId = newId();
    H.Queue = static_cast<uint16_t>(Queue);
    H.Operand = Operand;
    H.Seq = Seq;
    protocol::frameInto(SendBuf, H, B);
    return sendLocked(H, Via, Data, Len, std::move(Into));
  }
  /// Complete T with S (under M).
  void completeOp(const Ticket &T, const Status &S);
  /// Close the endpoints, ignoring the errors that closing reports.
  void closeQuietly();
  /// Fail every pending and later request with S.
  void failConnection(const Status &S);

  DeviceAddress Addr;
  ClientConfig Cfg;
  ForkGuard Fork;       ///< in a fork()ed child: no request, no UCX teardown
  mutable std::mutex M; // guards the endpoints and everything below
  bool Trace = false;   ///< OMPDPU_TRACE
  Timeline *Line = nullptr; ///< OMPDPU_TRACE names a file
  unsigned LineDevice = 0;  ///< this connection's track in Line
  Endpoints Ends;

private:
  /// The frame in SendBuf leaves; its ticket (under M).
  Ticket sendLocked(const protocol::Header &H, Lane Via, const void *Data,
                    uint64_t Len, std::vector<HostRange> Into);
  /// A ticket failed before it was sent.
  Ticket refused(protocol::MsgType Type, uint32_t Queue, bool Connected);
  /// A ticket failed because this process is a fork()ed child.
  Ticket refusedInChild(protocol::MsgType Type) const;
  /// Land a reply's bytes (Data) where T wants them; false when they are
  /// not at hand yet (T completes later).
  bool landReplyBytes(const Ticket &T, const transport::BulkData &Data);
  bool onMessage(const uint8_t *Ctrl, size_t Len,
                 const transport::BulkData &Data);
  void onPeerError(transport::Peer P, const Status &S);
  void checkHealth();
  void progressLocked();
  /// A fresh request id (ids wrap around; 0 is reserved for heartbeats).
  uint32_t newId() {
    uint32_t Id = NextId++;
    if (NextId == 0)
      NextId = 1;
    return Id;
  }

  unsigned ProgressCount = 0;
  PendingTable Pending;
  std::vector<uint8_t> SendBuf; ///< frames are encoded here
  uint32_t NextId = 1;
  TraceStats Stats;
  std::atomic<bool> Failed{false};
  Status FailStatus;
  std::string SessionExitMessage;
  OutputCursor Written[2]; ///< the session's stdout and stderr
  HealthPolicy Health;     ///< when silence means the server is gone
  std::vector<std::function<void()>> Deferred;
};

} // namespace ompdpu::client
