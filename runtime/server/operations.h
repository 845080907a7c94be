//===- operations.h - What a session's requests do --------------*- C++ -*-===//
//
// Allocations, copies in and out (one at a time or as a Batch), image
// loads, kernel runs and copies to peer sessions, each checked against the
// session's device memory and kernel table before any byte moves. The
// intake decides when a request starts; a RequestFinisher answers it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "protocol/messages.h"
#include "server/device_memory.h"
#include "server/kernel_runner.h"
#include "server/kernel_table.h"
#include "server/peer_links.h"
#include "server/request.h"
#include "transport/transport.h"

#include <memory>
#include <vector>

namespace ompdpu::server {

class Operations {
public:
  /// Largest device image accepted.
  static constexpr uint64_t kMaxImageSize = 1ull << 30;
  /// Largest total of a Batch's out pieces: they return in one reply.
  static constexpr uint64_t kMaxBatchOut = 1 << 20;
  /// Most arguments of a kernel run from the message callback.
  static constexpr size_t kRunNowArgs = 16;

  struct Parts {
    transport::Worker &W;
    RequestFinisher &Finish;
    DeviceMemory &Memory;
    KernelTable &Kernels;
    KernelRunner &Runner;
    uint64_t Token; ///< what a PeerSubmit must carry
  };
  explicit Operations(const Parts &P)
      : W(P.W), Finish(P.Finish), Memory(P.Memory), Kernels(P.Kernels),
        Runner(P.Runner), Token(P.Token) {}
  /// Copies to peer sessions (made once the worker exists).
  void setPeerLinks(PeerLinks *L) { Peers = L; }

  /// Start R in its turn. FromIntake: it just arrived (not started when its
  /// predecessor finished), so a short kernel may run at once.
  void start(const Request &R, bool FromIntake);
  /// A PeerSubmit from a peer session (checked by its token, not ordered).
  void peerSubmit(const Request &R) { submit(R, /*FromPeer=*/true); }
  /// Answer R with an error, dropping its bulk data.
  void fail(const Request &R, int32_t Code, const std::string &Msg);
  /// A Run of a short kernel, in its turn, runs and is answered from the
  /// message callback: no copy of the request. False when it must take the
  /// usual way (which also reports its errors).
  bool runNow(const protocol::Header &H, transport::Peer From,
              const uint8_t *Body, size_t Len);
  /// The same for a Batch with eager bytes whose kernel, if any, is short.
  bool batchNow(const protocol::Header &H, transport::Peer From,
                const uint8_t *Body, size_t Len,
                const transport::BulkData &Data);
  /// Answer a finished kernel's Run or Batch request.
  void kernelDone(const KernelJob &Job);

private:
  void alloc(const Request &R);
  void free(const Request &R);
  void submit(const Request &R, bool FromPeer);
  void retrieve(const Request &R);
  void batch(const Request &R, bool FromIntake);
  /// Why a Batch cannot be carried out (Code kOk: it can). Every piece is
  /// checked before any byte is written.
  protocol::Reply vetBatch(uint16_t Kernel, const protocol::BatchView &B,
                           size_t DataLen);
  /// A Batch whose in bytes are in place: run its kernel, if any, then
  /// answer with its out bytes.
  void runBatch(const protocol::Header &H, transport::Peer From,
                const protocol::BatchView &B, bool FromIntake);
  /// Answer a request with the bytes of Out (a vector of pieces or a
  /// BatchView's pieces), back to back.
  template <typename PieceList>
  void answerWith(const protocol::Header &H, transport::Peer From,
                  const PieceList &Out);
  void load(const Request &R);
  void run(const Request &R, bool FromIntake);
  void exchange(const Request &R);

  transport::Worker &W;
  RequestFinisher &Finish;
  DeviceMemory &Memory;
  KernelTable &Kernels;
  KernelRunner &Runner;
  const uint64_t Token;
  PeerLinks *Peers = nullptr;
  /// Out pieces are gathered here for their reply; a new buffer is made
  /// only while the transport still reads the last one.
  std::shared_ptr<std::vector<uint8_t>> GatherBuf;
};

} // namespace ompdpu::server
