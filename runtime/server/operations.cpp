//===- operations.cpp - What a session's requests do ----------------------===//
#include "server/operations.h"

#include "common/log.h"
#include "server/device_identity.h"

#include <cstring>

namespace ompdpu::server {

using namespace protocol;
using transport::BulkData;
using transport::Peer;

void Operations::fail(const Request &R, int32_t Code, const std::string &Msg) {
  Reply Rep;
  Rep.Code = Code;
  Rep.Message = Msg;
  if (R.Data.Length)
    W.release(R.Data);
  Finish.complete(R, Rep);
}

void Operations::start(const Request &R, bool FromIntake) {
  switch (R.H.Type) {
  case MsgType::Alloc:
    return alloc(R);
  case MsgType::Free:
    return free(R);
  case MsgType::Submit:
    return submit(R, false);
  case MsgType::Retrieve:
    return retrieve(R);
  case MsgType::Batch:
    return batch(R, FromIntake);
  case MsgType::LoadImage:
    return load(R);
  case MsgType::Run:
    return run(R, FromIntake);
  case MsgType::ExchangeOut:
    return exchange(R);
  default:
    return fail(R, kErrInvalid,
                format("unexpected %s request", typeName(R.H.Type)));
  }
}

void Operations::alloc(const Request &R) {
  Alloc A;
  Reader Rd(R.Body.data(), R.Body.size());
  if (!decodeBody(Rd, A).ok())
    return fail(R, kErrInvalid, "malformed Alloc");
  auto P = Memory.allocate(A.Size);
  if (!P)
    return fail(R, kErrNoMemory, P.status().message());
  Reply Rep;
  Rep.Value = *P;
  Finish.complete(R, Rep);
}

void Operations::free(const Request &R) {
  Free F;
  Reader Rd(R.Body.data(), R.Body.size());
  if (!decodeBody(Rd, F).ok())
    return fail(R, kErrInvalid, "malformed Free");
  if (Status S = Memory.release(F.Ptr); !S.ok())
    return fail(R, kErrNotFound, S.message());
  Finish.complete(R, Reply());
}

void Operations::submit(const Request &R, bool FromPeer) {
  uint64_t Dst = 0, Size = 0;
  Reader Rd(R.Body.data(), R.Body.size());
  if (FromPeer) {
    PeerSubmit PS;
    if (!decodeBody(Rd, PS).ok())
      return fail(R, kErrInvalid, "malformed PeerSubmit");
    if (PS.Token != Token)
      return fail(R, kErrNotFound, "wrong session token in PeerSubmit");
    Dst = PS.DstPtr;
    Size = PS.Size;
  } else {
    Transfer T;
    if (!decodeBody(Rd, T).ok())
      return fail(R, kErrInvalid, "malformed Submit");
    Dst = T.DevicePtr;
    Size = T.Size;
  }
  if (R.Data.Length != Size)
    return fail(R, kErrInvalid,
                format("submit of %lu bytes carries %zu bytes of data",
                       (unsigned long)Size, R.Data.Length));
  if (Status S = Memory.check(Dst, Size); !S.ok())
    return fail(R, kErrInvalid, "submit rejected: " + S.message());
  if (Size == 0)
    return Finish.complete(R, Reply());
  Request Copy = R;
  Copy.Data = BulkData(); // consumed by receive()
  W.receive(R.Data, reinterpret_cast<void *>(Dst),
            [this, Copy](const Status &S) {
              Reply Rep;
              if (!S.ok()) {
                Rep.Code = kErrInternal;
                Rep.Message = S.message();
              }
              Finish.complete(Copy, Rep);
            });
}

Reply Operations::vetBatch(uint16_t Kernel, const BatchView &B,
                           size_t DataLen) {
  Reply Why;
  auto Reject = [&Why](int32_t Code, std::string Message) {
    Why.Code = Code;
    Why.Message = std::move(Message);
    return Why;
  };
  if (Kernel && !Kernels.find(Kernel))
    return Reject(
        kErrNotFound,
        format("kernel handle %u is not a kernel of a loaded image", Kernel));
  if (B.inBytes() != DataLen)
    return Reject(kErrInvalid,
                  format("batch of %lu bytes of submits carries %zu bytes",
                         (unsigned long)B.inBytes(), DataLen));
  if (B.outBytes() > kMaxBatchOut)
    return Reject(kErrInvalid,
                  format("batch asks for %lu bytes back, at most %lu",
                         (unsigned long)B.outBytes(),
                         (unsigned long)kMaxBatchOut));
  for (size_t K = 0; K < B.numIn(); ++K)
    if (Status S = Memory.check(B.in(K).DevicePtr, B.in(K).Size); !S.ok())
      return Reject(kErrInvalid, "submit rejected: " + S.message());
  for (size_t K = 0; K < B.numOut(); ++K)
    if (Status S = Memory.check(B.out(K).DevicePtr, B.out(K).Size); !S.ok())
      return Reject(kErrInvalid, "retrieve rejected: " + S.message());
  return Why;
}

namespace {
/// A Batch's out pieces, read in place.
struct OutPieces {
  const BatchView &B;
  size_t size() const { return B.numOut(); }
  Piece operator[](size_t K) const { return B.out(K); }
};

/// Copy a Batch's in bytes (back to back at Src) to their device ranges.
void scatterIn(const BatchView &B, const uint8_t *Src) {
  for (size_t K = 0; K < B.numIn(); ++K) {
    Piece P = B.in(K);
    std::memcpy(reinterpret_cast<void *>(P.DevicePtr), Src, P.Size);
    Src += P.Size;
  }
}
} // namespace

void Operations::batch(const Request &R, bool FromIntake) {
  BatchView B;
  Reader Rd(R.Body.data(), R.Body.size());
  if (!decodeBody(Rd, B).ok())
    return fail(R, kErrInvalid, "malformed Batch");
  if (Reply Why = vetBatch(R.H.Operand, B, R.Data.Length); Why.Code != kOk)
    return fail(R, Why.Code, Why.Message);
  if (!R.Data.Rendezvous) {
    // Eager bytes: scatter straight from UCX's buffer.
    if (R.Data.Length) {
      scatterIn(B, static_cast<const uint8_t *>(R.Data.Desc));
      W.release(R.Data);
    }
    return runBatch(R.H, R.From, B, FromIntake);
  }
  auto Staging = std::make_shared<std::vector<uint8_t>>(R.Data.Length);
  Request Copy = R;
  Copy.Data = BulkData(); // consumed by receive()
  W.receive(R.Data, Staging->data(), [this, Copy, Staging](const Status &S) {
    if (!S.ok())
      return fail(Copy, kErrInternal, "batch transfer failed: " + S.message());
    BatchView B;
    Reader Rd(Copy.Body.data(), Copy.Body.size());
    decodeBody(Rd, B); // decoded before: cannot fail
    // Checked again: memory may have been freed while the bytes travelled.
    if (Reply Why = vetBatch(Copy.H.Operand, B, Staging->size());
        Why.Code != kOk)
      return fail(Copy, Why.Code, Why.Message);
    scatterIn(B, Staging->data());
    runBatch(Copy.H, Copy.From, B, /*FromIntake=*/false);
  });
}

void Operations::runBatch(const Header &H, Peer From, const BatchView &B,
                          bool FromIntake) {
  KernelInfo *Kernel = Kernels.find(H.Operand);
  if (!Kernel)
    return answerWith(H, From, OutPieces{B});
  if (H.Queue)
    Finish.markLanded(H.Queue, H.Seq + 1); // its bytes are in place
  KernelJob Job;
  Job.Kernel = Kernel;
  Job.Args.resize(B.numArgs());
  for (size_t K = 0; K < Job.Args.size(); ++K)
    Job.Args[K] = B.arg(K);
  Job.Request = H;
  Job.From = From;
  Job.Out.resize(B.numOut());
  for (size_t K = 0; K < Job.Out.size(); ++K)
    Job.Out[K] = B.out(K);
  // As in run: a short kernel that arrives in its turn runs at once.
  Runner.start(std::move(Job), FromIntake);
}

template <typename PieceList>
void Operations::answerWith(const Header &H, Peer From, const PieceList &Out) {
  if (Out.size() == 0)
    return Finish.complete(H, From, Reply());
  // Checked again: another queue may have freed a range while a long kernel
  // ran.
  uint64_t Total = 0;
  for (size_t K = 0; K < Out.size(); ++K) {
    Piece P = Out[K];
    if (Status S = Memory.check(P.DevicePtr, P.Size); !S.ok()) {
      Reply Rep;
      Rep.Code = kErrInvalid;
      Rep.Message = "retrieve rejected: " + S.message();
      return Finish.complete(H, From, Rep);
    }
    Total += P.Size;
  }
  if (!GatherBuf || GatherBuf.use_count() > 1)
    GatherBuf = std::make_shared<std::vector<uint8_t>>();
  GatherBuf->resize(Total);
  uint8_t *Dst = GatherBuf->data();
  for (size_t K = 0; K < Out.size(); ++K) {
    Piece P = Out[K];
    std::memcpy(Dst, reinterpret_cast<const void *>(P.DevicePtr), P.Size);
    Dst += P.Size;
  }
  Reply Rep;
  Rep.Value = Total;
  Finish.complete(H, From, Rep, GatherBuf->data(), Total, GatherBuf);
}

void Operations::retrieve(const Request &R) {
  Transfer T;
  Reader Rd(R.Body.data(), R.Body.size());
  if (!decodeBody(Rd, T).ok())
    return fail(R, kErrInvalid, "malformed Retrieve");
  if (Status S = Memory.check(T.DevicePtr, T.Size); !S.ok())
    return fail(R, kErrInvalid, "retrieve rejected: " + S.message());
  Reply Rep;
  Rep.Value = T.Size;
  // The bytes leave straight from device memory (zero copy); the queue moves
  // on only when UCX is done reading them.
  Finish.complete(R, Rep, reinterpret_cast<const void *>(T.DevicePtr), T.Size);
}

void Operations::load(const Request &R) {
  LoadImage L;
  Reader Rd(R.Body.data(), R.Body.size());
  if (!decodeBody(Rd, L).ok())
    return fail(R, kErrInvalid, "malformed LoadImage");
  if (L.Size != R.Data.Length || L.Size == 0 || L.Size > kMaxImageSize)
    return fail(R, kErrLoad,
                format("image size %lu does not match its data (%zu bytes)",
                       (unsigned long)L.Size, R.Data.Length));
  if (L.NumDevices < 1 || L.DeviceNum < 0 || L.DeviceNum >= L.NumDevices)
    return fail(R, kErrLoad,
                format("device number %d of %d devices is not a device",
                       L.DeviceNum, L.NumDevices));
  setDeviceIdentity({L.DeviceNum, L.NumDevices});
  auto Buf = std::make_shared<std::vector<uint8_t>>(L.Size);
  Request Copy = R;
  Copy.Data = BulkData(); // consumed by receive(): never release it again
  W.receive(R.Data, Buf->data(), [this, Copy, Buf](const Status &S) {
    if (!S.ok())
      return fail(Copy, kErrLoad, "image transfer failed: " + S.message());
    auto Entries = Kernels.load(Buf->data(), Buf->size(), Memory);
    if (!Entries)
      return fail(Copy, kErrLoad, Entries.status().message());
    auto Encoded =
        std::make_shared<std::vector<uint8_t>>(encodeEntries(*Entries));
    Reply Rep;
    Rep.Value = Entries->size();
    Finish.complete(Copy, Rep, Encoded->data(), Encoded->size(), Encoded);
  });
}

void Operations::run(const Request &R, bool FromIntake) {
  Run Msg;
  Reader Rd(R.Body.data(), R.Body.size());
  if (!decodeBody(Rd, Msg).ok())
    return fail(R, kErrInvalid, "malformed Run");
  KernelInfo *Kernel = Kernels.find(R.H.Operand);
  if (!Kernel)
    return fail(R, kErrNotFound,
                format("kernel handle %u is not a kernel of a loaded image",
                       R.H.Operand));
  KernelJob Job;
  Job.Kernel = Kernel;
  Job.Args = std::move(Msg.Args);
  Job.Request = R.H;
  Job.From = R.From;
  // A short kernel that arrives in its turn runs at once, without a trip
  // through the ready queue and the loop.
  Runner.start(std::move(Job), FromIntake);
}

void Operations::exchange(const Request &R) {
  ExchangeOut X;
  Reader Rd(R.Body.data(), R.Body.size());
  if (!decodeBody(Rd, X).ok())
    return fail(R, kErrInvalid, "malformed ExchangeOut");
  if (Status S = Memory.check(X.SrcPtr, X.Size); !S.ok())
    return fail(R, kErrInvalid, "exchange rejected: " + S.message());
  Request Copy = R;
  Status S = Peers->copy(
      X, [this, Copy](const Reply &Rep) { Finish.complete(Copy, Rep); });
  if (!S.ok())
    return fail(R, kErrPeer, S.message());
}

bool Operations::runNow(const Header &H, Peer From, const uint8_t *Body,
                        size_t Len) {
  KernelInfo *K = Kernels.find(H.Operand);
  if (!K || !Runner.isShort(*K) || Len % 8 || Len / 8 > kRunNowArgs)
    return false;
  uint64_t Args[kRunNowArgs];
  std::memcpy(Args, Body, Len);
  Runner.runShortNow(*K, Args, Len / 8);
  Finish.complete(H, From, Reply());
  return true;
}

bool Operations::batchNow(const Header &H, Peer From, const uint8_t *Body,
                          size_t Len, const BulkData &Data) {
  KernelInfo *K = H.Operand ? Kernels.find(H.Operand) : nullptr;
  if ((H.Operand && (!K || !Runner.isShort(*K))) || Data.Rendezvous)
    return false;
  BatchView B;
  Reader Rd(Body, Len);
  if (!decodeBody(Rd, B).ok() || B.numArgs() > kRunNowArgs ||
      vetBatch(H.Operand, B, Data.Length).Code != kOk)
    return false;
  if (Data.Length)
    scatterIn(B, static_cast<const uint8_t *>(Data.Desc));
  if (K) {
    uint64_t Args[kRunNowArgs];
    for (size_t I = 0; I < B.numArgs(); ++I)
      Args[I] = B.arg(I);
    Runner.runShortNow(*K, Args, B.numArgs());
  }
  answerWith(H, From, OutPieces{B});
  return true;
}

void Operations::kernelDone(const KernelJob &Job) {
  answerWith(Job.Request, Job.From, Job.Out);
}

} // namespace ompdpu::server
