//===- pending.h - Requests a connection waits for --------------*- C++ -*-===//
#pragma once

#include "common/status.h"
#include "protocol/messages.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

namespace ompdpu::client {

/// Host memory a reply's bytes land in.
struct HostRange {
  void *Dst = nullptr;
  uint64_t Size = 0;
};

/// Bytes a reply brought into one place that another wants as well, copied
/// once the reply is in (see Connection::copyOnArrival).
struct LateCopy {
  const void *From = nullptr;
  void *To = nullptr;
  uint64_t Size = 0;
};

/// One request in flight.
struct PendingOp {
  uint32_t Id = 0; ///< RequestId on the wire
  protocol::MsgType Type = protocol::MsgType::Ping;
  std::atomic<bool> Done{false};
  Status Result;
  uint64_t Value = 0;
  /// Where the reply's bytes land, back to back in this order: a
  /// Retrieve's one range, a Batch's out pieces.
  std::vector<HostRange> Into;
  /// Copies made when the request succeeds, before it is Done.
  std::vector<LateCopy> Then;
  bool RunsKernel = false;      ///< a Run, or a Batch that runs a kernel
  std::vector<uint8_t> Payload; ///< bulk data of a LoadImage or Trace reply
  /// A handshake step's answer (HelloReply or AuthChallenge; its body is
  /// the Payload).
  protocol::MsgType ReplyType = protocol::MsgType::Reply;
  std::chrono::steady_clock::time_point Issued;
  uint16_t Queue = 0; ///< its asynchronous queue (0: none)
  uint64_t Bytes = 0; ///< bulk bytes out and expected back, for the same
};
using Ticket = std::shared_ptr<PendingOp>;

/// The requests of a connection still waiting for their replies. Usually a
/// handful: a flat array searched from the newest beats a tree that
/// allocates a node per request.
class PendingTable {
public:
  void add(Ticket T) { Ops.push_back(std::move(T)); }
  /// The request with this id, or null.
  Ticket *find(uint32_t Id) {
    for (size_t K = Ops.size(); K-- > 0;)
      if (Ops[K]->Id == Id)
        return &Ops[K];
    return nullptr;
  }
  void remove(uint32_t Id) {
    if (Ticket *T = find(Id)) {
      *T = std::move(Ops.back());
      Ops.pop_back();
    }
  }
  bool empty() const { return Ops.empty(); }
  std::vector<Ticket> takeAll() { return std::move(Ops); }
  auto begin() const { return Ops.begin(); }
  auto end() const { return Ops.end(); }

private:
  std::vector<Ticket> Ops;
};

} // namespace ompdpu::client
