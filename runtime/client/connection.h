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

#include "client/clock_sync.h"
#include "client/credentials.h"
#include "client/handshake.h"
#include "client/request_link.h"
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

/// A connection to one ompdpu-server: the handshake, the requests of the
/// protocol, and a goodbye.
class Connection : public RequestLink {
public:
  /// Makes the connection's transport workers (for the given UCX_TLS
  /// list); tests pass one that makes in-memory workers.
  using WorkerFactory = Endpoints::WorkerFactory;

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
  /// finish() for every connection started, all against one Deadline (so
  /// silent servers cost one connect timeout in all); a failure replaces
  /// its connection.
  static void
  finishAll(std::vector<Expected<std::unique_ptr<Connection>>> &Started,
            std::chrono::steady_clock::time_point Deadline);
  /// A connection that stands for a server unreachable when the program
  /// started (Why): every request fails with Why, so that the device keeps
  /// its number and its users learn why it cannot serve them.
  static std::unique_ptr<Connection> unreachable(const DeviceAddress &Addr,
                                                 const ClientConfig &Cfg,
                                                 const Status &Why);
  /// Made by unreachable().
  bool placeholder() const { return Placeholder; }
  /// When a handshake started now must have finished.
  static std::chrono::steady_clock::time_point
  connectDeadline(const ClientConfig &Cfg);
  /// Says Bye to the server when still connected.
  ~Connection();

  /// Facts from the handshake.
  const ServerInfo &info() const { return Info; }

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
  /// Load a device image; the reply's Payload holds the entry table. Its
  /// kernels see DeviceNum of NumDevices from omp_get_device_num() and
  /// omp_get_num_devices().
  Ticket loadImage(const void *Image, uint64_t Size, int32_t DeviceNum = 0,
                   int32_t NumDevices = 1);
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

private:
  /// OMPDPU_TRACE names a file: the session records as well, and its clock
  /// is sampled against ours (connection_trace.cpp).
  void startSessionTrace();
  /// Fetch what the session recorded into the timeline, and write it.
  void collectSessionTrace();
  /// Round trips that return the session's clock; the best of them.
  ClockSample sampleSessionClock();
  ClockSample TraceClockStart; ///< the session's clock when tracing began

  Connection(const DeviceAddress &A, const ClientConfig &C, WorkerFactory Make)
      : RequestLink(A, C, std::move(Make)) {}
  Status sendHello(const std::string &WantIsa);
  Status completeHandshake(std::chrono::steady_clock::time_point Deadline);
  /// Wait for the answer to a handshake step, until Deadline.
  Status awaitHandshake(const Ticket &T,
                        std::chrono::steady_clock::time_point Deadline);
  /// Answer the server's challenge; the ticket of the proof sent.
  Expected<Ticket> prove(const Ticket &Challenge);
  Ticket HelloTicket; ///< the handshake under way (between start and finish)
  Credentials Creds;
  protocol::Hello Hi; ///< what this client said (its nonce)
  ServerInfo Info;
  bool Placeholder = false;
};

} // namespace ompdpu::client
