//===- dpu_device.cpp - One DPU as an OpenMP device -----------------------===//
#include "dpu_device.h"

#include "image_deps.h"

#include "common/elf_image.h"
#include "common/log.h"

#include <cstdio>
#include <cstring>

namespace ompdpu::plugin {

using client::Ticket;

DpuDevice::DpuDevice(int32_t Index, int32_t Count,
                     std::unique_ptr<client::Connection> C)
    : Index(Index), Count(Count), Conn(std::move(C)),
      Pool(
          [this](uint64_t Size) -> Expected<uint64_t> {
            Ticket T =
                Conn->alloc(Size, static_cast<int32_t>(MemoryKind::Default));
            if (Status S = Conn->wait(T); !S.ok())
              return S;
            return T->Value;
          },
          [this](uint64_t Ptr) { return Conn->wait(Conn->free(Ptr)); }),
      Results(Conn->tracing()) {}

DpuDevice::~DpuDevice() {
  if (Results.Trace && (Results.Taken || Results.Missed))
    log(LogLevel::Trace,
        "%s: results asked for with their launch: %lu taken, %lu not",
        name().c_str(), (unsigned long)Results.Taken.load(),
        (unsigned long)Results.Missed.load());
  delete SpareQueue.load();
}

std::string DpuDevice::name() const {
  return format("device %d (%s)", Index, Conn->address().text().c_str());
}

std::string DpuDevice::address() const { return Conn->address().text(); }

uint16_t DpuDevice::machine() const { return machineForIsa(info().Isa); }

AsyncQueue *DpuDevice::acquireQueue() {
  // The queue the last synchronize() gave back, taken without a lock: a
  // thread that offloads region after region never takes M here.
  if (AsyncQueue *Spare =
          SpareQueue.exchange(nullptr, std::memory_order_acquire))
    return Spare;
  std::lock_guard<std::mutex> L(M);
  if (!FreeQueues.empty()) {
    AsyncQueue *Q = FreeQueues.back().release();
    FreeQueues.pop_back();
    return Q;
  }
  auto *Q = new AsyncQueue();
  Q->Id = NextQueueId++;
  return Q;
}

/// Submits and retrieves up to this size join the queue's batch.
constexpr int64_t kBatchPieceMax = 4096;
/// A batch is sent once its submits hold this many bytes...
constexpr size_t kBatchFlushBytes = 64 * 1024;
/// ... or it has this many pieces: its frame (16 bytes a piece) then stays
/// well within what UCX takes as an active message's header (about 8 KiB).
constexpr size_t kBatchMaxPieces = 256;
/// Emptied submit buffers a queue keeps for reuse.
constexpr size_t kSpareBuffers = 4;

void DpuDevice::flushBatch(AsyncQueue &Q) {
  AsyncQueue::PendingBatch &B = Q.Batch;
  if (B.empty())
    return;
  bool RanKernel = B.Kernel && !(B.In.empty() && B.Out.empty());
  if (B.In.empty() && B.Out.empty()) {
    // A launch alone travels as the bare Run: one cache line on the wire.
    track(Q,
          Conn->run(B.Kernel, B.Args.data(), B.Args.size(), Q.Id, Q.NextSeq++));
  } else {
    const std::vector<uint8_t> &Bytes =
        B.In.empty() ? B.InBytes : Q.Sent.emplace_back(std::move(B.InBytes));
    track(Q, Conn->batch(B.In, Bytes.data(), Bytes.size(), B.Kernel,
                         B.Args.data(), B.Args.size(), B.Out, std::move(B.Into),
                         Q.Id, Q.NextSeq++));
    if (!B.In.empty()) {
      B.InBytes.clear();
      if (!Q.SpareBytes.empty()) {
        B.InBytes = std::move(Q.SpareBytes.back());
        Q.SpareBytes.pop_back();
      }
    }
  }
  B.In.clear();
  B.Kernel = 0;
  B.Args.clear();
  B.Out.clear();
  B.Into.clear();
  if (!Q.Point)
    return;
  // Events recorded before the kernel joined (libomptarget records them
  // right after a new mapping's copy) wait for the Batch's bytes only, not
  // for its kernel: another thread that maps the same data must not wait
  // for this region to end.
  FlushPoint &P = *Q.Point;
  std::shared_ptr<const Horizon> All, BeforeKernel;
  if (!RanKernel || P.AnyAfterKernel)
    All = snapshot(Q);
  if (!RanKernel) {
    BeforeKernel = All;
  } else {
    auto H = std::make_shared<Horizon>();
    H->Done.assign(Q.InFlight.begin(), Q.InFlight.end() - 1);
    H->Partial = Q.InFlight.back();
    H->Queue = Q.Id;
    H->Seq = Q.NextSeq - 1;
    BeforeKernel = std::move(H);
  }
  {
    std::lock_guard<std::mutex> L(P.M);
    P.BeforeKernel = std::move(BeforeKernel);
    P.All = std::move(All);
    P.Sent = true;
  }
  Q.Point.reset();
}

void DpuDevice::track(AsyncQueue &Q, Ticket T) {
  Q.InFlight.push_back(std::move(T));
  Q.Snapshot.reset();
}

std::shared_ptr<const Horizon> DpuDevice::snapshot(AsyncQueue &Q) {
  if (!Q.Snapshot) {
    auto H = std::make_shared<Horizon>();
    H->Done = Q.InFlight;
    Q.Snapshot = std::move(H);
  }
  return Q.Snapshot;
}

void DpuDevice::flushBatchLocked(AsyncQueue &Q) {
  std::lock_guard<std::mutex> L(Q.Lock);
  flushBatch(Q);
}

template <typename IssueFn>
Status DpuDevice::perform(AsyncQueue *Q, IssueFn F) {
  if (!Q)
    return Conn->wait(F(0u, 0u));
  Q->Launch.close();
  std::lock_guard<std::mutex> L(Q->Lock);
  flushBatch(*Q);
  track(*Q, F(Q->Id, Q->NextSeq++));
  // Fail fast when the operation could not even be sent.
  const Ticket &T = Q->InFlight.back();
  if (T->Done.load() && !T->Result.ok())
    return T->Result;
  return Status();
}

namespace {
/// Why an image's entries do not match the host's: `declare target link`,
/// whose host entries have no counterpart in an ompdpu device image, or
/// images built apart.
std::string entryCountMismatch(size_t DeviceCount,
                               const std::vector<HostEntry> &Host) {
  constexpr int32_t kDeclareTargetLink = 0x1; // OMP_DECLARE_TARGET_LINK
  const std::string Suffix = "_decl_tgt_ref_ptr";
  std::string Linked;
  for (const HostEntry &E : Host)
    if (E.Size && (E.Flags & kDeclareTargetLink)) {
      std::string Name = E.Name;
      if (Name.size() > Suffix.size() &&
          !Name.compare(Name.size() - Suffix.size(), Suffix.size(), Suffix))
        Name.resize(Name.size() - Suffix.size());
      Linked += (Linked.empty() ? "" : ", ") + Name;
    }
  if (!Linked.empty())
    return format("cannot load image: `declare target link` is not "
                  "supported (%s): use `declare target to`, or map the "
                  "variable in the regions' clauses",
                  Linked.c_str());
  return format("cannot load image: it has %zu offload entries, the host "
                "expects %zu",
                DeviceCount, Host.size());
}
} // namespace

Expected<std::vector<LoadedEntry>>
DpuDevice::loadImage(const void *Image, size_t Size,
                     const std::vector<HostEntry> &Host) {
  // A malformed image goes as it is: the server says what is wrong with it.
  auto Stripped = withoutHostRuntimeDeps(Image, Size);
  if (Stripped && !Stripped->empty()) {
    Image = Stripped->data();
    Size = Stripped->size();
  }
  Ticket T = Conn->loadImage(Image, Size, Index, Count);
  if (Status S = Conn->wait(T); !S.ok())
    return S.withContext("cannot load image");
  std::vector<protocol::EntryInfo> Entries;
  if (Status S = protocol::decodeEntries(T->Payload.data(), T->Payload.size(),
                                         Entries);
      !S.ok())
    return S.withContext("cannot load image");
  if (Entries.size() != Host.size())
    return Status::error(entryCountMismatch(Entries.size(), Host));
  std::vector<LoadedEntry> Out;
  Out.reserve(Entries.size());
  std::lock_guard<std::mutex> L(M);
  for (size_t K = 0; K < Entries.size(); ++K) {
    const protocol::EntryInfo &E = Entries[K];
    if (Host[K].Size != E.Size)
      return Status::error(format("cannot load image: entry '%s' has %lu "
                                  "bytes on the device, %lu on the host",
                                  E.Name.c_str(), (unsigned long)E.Size,
                                  (unsigned long)Host[K].Size));
    if ((E.Size == 0) != (E.Kernel != 0))
      return Status::error(format("cannot load image: entry '%s' is %s without "
                                  "a kernel handle",
                                  E.Name.c_str(),
                                  E.Size == 0 ? "a kernel" : "a global"));
    LoadedEntry &LE = Out.emplace_back();
    LE.Kernel = E.Kernel ? &Kernels.emplace_back(E.Kernel, E.Name) : nullptr;
    LE.Address = E.Addr;
    LE.Size = E.Size;
    LE.Flags = E.Flags;
    LE.Name = E.Name;
  }
  return Out;
}

Expected<void *> DpuDevice::alloc(int64_t Size, MemoryKind Kind) {
  if (Kind == MemoryKind::Host || Kind == MemoryKind::Shared)
    return Status::error("host and shared allocations are not supported: DPU "
                         "memory is not addressable from the host");
  if (Size < 0)
    return Status::error(format("negative allocation size %ld", (long)Size));
  auto P = Pool.allocate(static_cast<uint64_t>(Size));
  if (!P)
    return P.status().withContext(
        format("cannot allocate %ld bytes", (long)Size));
  Slots.allocated(*P, static_cast<uint64_t>(Size));
  return reinterpret_cast<void *>(*P);
}

Status DpuDevice::free(void *Ptr) {
  uint64_t Freed = 0;
  Status S = Pool.release(reinterpret_cast<uint64_t>(Ptr), &Freed);
  if (S.ok() && Freed)
    Slots.forget(reinterpret_cast<uint64_t>(Ptr), Freed);
  return S;
}

Status DpuDevice::submit(void *Dst, const void *Src, int64_t Size,
                         AsyncQueue *Q) {
  if (Size < 0)
    return Status::error("negative transfer size");
  if (Size == sizeof(void *)) {
    uint64_t Value;
    std::memcpy(&Value, Src, sizeof(Value));
    Slots.submitted(reinterpret_cast<uint64_t>(Dst), Value);
  }
  if (Q && Size <= kBatchPieceMax) {
    // Copying a few bytes is cheaper than a message of their own.
    Q->Launch.close();
    std::lock_guard<std::mutex> L(Q->Lock);
    AsyncQueue::PendingBatch &B = Q->Batch;
    if (B.closedToSubmits() || B.In.size() + B.Out.size() >= kBatchMaxPieces)
      flushBatch(*Q);
    B.In.push_back(
        {reinterpret_cast<uint64_t>(Dst), static_cast<uint64_t>(Size)});
    const auto *Bytes = static_cast<const uint8_t *>(Src);
    B.InBytes.insert(B.InBytes.end(), Bytes, Bytes + Size);
    if (B.InBytes.size() >= kBatchFlushBytes)
      flushBatch(*Q);
    return Status();
  }
  return perform(Q, [&](uint32_t Queue, uint32_t Seq) {
    return Conn->submit(reinterpret_cast<uint64_t>(Dst), Src, Size, Queue, Seq);
  });
}

Status DpuDevice::retrieve(void *Dst, const void *Src, int64_t Size,
                           AsyncQueue *Q) {
  if (Size < 0)
    return Status::error("negative transfer size");
  if (!Q)
    return perform(Q, [&](uint32_t Queue, uint32_t Seq) {
      return Conn->retrieve(Dst, reinterpret_cast<uint64_t>(Src), Size, Queue,
                            Seq);
    });
  Status S;
  {
    std::lock_guard<std::mutex> L(Q->Lock);
    S = queueRetrieve(*Q, Dst, Src, Size);
  }
  // libomptarget restores host pointers in the range right after we return.
  if (S.ok() && Slots.overlaps(reinterpret_cast<uint64_t>(Src),
                               static_cast<uint64_t>(Size)))
    return landNow(*Q);
  return S;
}

Status DpuDevice::queueRetrieve(AsyncQueue &Q, void *Dst, const void *Src,
                                int64_t Size) {
  if (Size <= kBatchPieceMax) {
    // Comes back with the batch's reply (a region's map(from:) scalar).
    if (Q.Launch.open() &&
        Q.Launch.take(*Conn, Dst, reinterpret_cast<uint64_t>(Src),
                      static_cast<uint64_t>(Size), Results))
      return Status();
    AsyncQueue::PendingBatch &B = Q.Batch;
    if (B.In.size() + B.Out.size() >= kBatchMaxPieces)
      flushBatch(Q);
    B.Out.push_back(
        {reinterpret_cast<uint64_t>(Src), static_cast<uint64_t>(Size)});
    B.Into.push_back({Dst, static_cast<uint64_t>(Size)});
    return Status();
  }
  Q.Launch.close();
  flushBatch(Q);
  track(Q, Conn->retrieve(Dst, reinterpret_cast<uint64_t>(Src), Size, Q.Id,
                          Q.NextSeq++));
  const Ticket &T = Q.InFlight.back();
  if (T->Done.load() && !T->Result.ok())
    return T->Result;
  return Status();
}

Status DpuDevice::landNow(AsyncQueue &Q) {
  flushBatchLocked(Q);
  // The server runs a queue's operations in order, but replies may be
  // handled out of order: wait for each. Sent, the batch has no events
  // left that another thread would send it for: InFlight stays as it is.
  for (const Ticket &T : Q.InFlight)
    if (Status S = Conn->wait(T); !S.ok())
      return S;
  return Status();
}

Status DpuDevice::exchange(const void *Src, DpuDevice &Dst, void *DstPtr,
                           int64_t Size, AsyncQueue *Q) {
  if (Size < 0)
    return Status::error("negative transfer size");
  return perform(Q, [&](uint32_t Queue, uint32_t Seq) {
    return Conn->exchange(reinterpret_cast<uint64_t>(Src), Size, Dst.info(),
                          reinterpret_cast<uint64_t>(DstPtr), Queue, Seq);
  });
}

Status DpuDevice::launch(KernelRecord *Kernel, const uint64_t *Args,
                         size_t Count, AsyncQueue *Q) {
  if (!Q)
    return Conn->wait(Conn->run(Kernel->Handle, Args, Count, 0, 0));
  // Joins the queue's batch, after the region's small submits. What
  // followed the kernel's last launches decides when it leaves (see
  // KernelResults::Follow).
  Q->Launch.finish(Results);
  std::lock_guard<std::mutex> L(Q->Lock);
  AsyncQueue::PendingBatch &B = Q->Batch;
  if (B.closedToSubmits())
    flushBatch(*Q);
  B.Kernel = Kernel->Handle;
  B.Args.assign(Args, Args + Count);
  Q->Launch.begin(Kernel->Results, B.Args);
  switch (Kernel->Results.follow()) {
  case KernelResults::Follow::None:
    flushBatch(*Q);
    break;
  case KernelResults::Follow::Predict:
    if (!Q->Launch.asked() &&
        Q->Launch.ask(B.Out, B.Into,
                      kBatchMaxPieces - B.In.size() - B.Out.size(), Pool)) {
      flushBatch(*Q);
      Q->Launch.sent(Q->InFlight.back());
    }
    // Otherwise (results already asked for in this queue, or ranges the
    // pool does not vouch for) it waits for them, as with Hold.
    break;
  case KernelResults::Follow::Hold:
    break; // leaves with its results, at synchronize at the latest
  }
  return Status();
}

Status DpuDevice::synchronize(AsyncQueue *Q) {
  if (!Q)
    return Status();
  flushBatchLocked(*Q);
  Q->Launch.finish(Results);
  Q->Launch.synchronized();
  Status First;
  for (const Ticket &T : Q->InFlight) {
    Status S = Conn->wait(T);
    if (!S.ok() && First.ok())
      First = S;
  }
  Q->InFlight.clear();
  Q->Snapshot.reset();
  // Every operation has finished: UCX reads the sent bytes no more.
  for (std::vector<uint8_t> &B : Q->Sent)
    if (Q->SpareBytes.size() < kSpareBuffers) {
      B.clear();
      Q->SpareBytes.push_back(std::move(B));
    }
  Q->Sent.clear();
  ++Q->Epoch;
  if (AsyncQueue *Old = SpareQueue.exchange(Q, std::memory_order_acq_rel)) {
    std::lock_guard<std::mutex> L(M);
    FreeQueues.emplace_back(Old);
  }
  return First;
}

Status DpuDevice::recordEvent(Event *E, AsyncQueue *Q) {
  E->Before.reset();
  E->Point.reset();
  E->QueueId = 0;
  if (!Q)
    return Status();
  // The launch window stays open: an event changes nothing on the device,
  // and libomptarget 15+ records one after each map(from:) retrieve.
  E->QueueId = Q->Id;
  E->QueueEpoch = Q->Epoch;
  std::lock_guard<std::mutex> L(Q->Lock);
  if (Q->Batch.empty()) {
    E->Before = snapshot(*Q);
  } else {
    // Known when the batch leaves, at the queue's next operation that
    // cannot join it or at synchronize.
    if (!Q->Point)
      Q->Point = std::make_shared<FlushPoint>(Q);
    E->Point = Q->Point;
    E->AfterKernel = Q->Batch.Kernel != 0;
    Q->Point->AnyAfterKernel |= E->AfterKernel;
  }
  return Status();
}

Status DpuDevice::waitEvent(Event *E, AsyncQueue *Mine) {
  if (Mine) {
    Mine->Launch.close();
    // Operations of one queue already run in order: nothing to wait for.
    if (E->QueueId && Mine->Id == E->QueueId && Mine->Epoch == E->QueueEpoch)
      return Status();
  }
  std::shared_ptr<const Horizon> Before = E->Before;
  if (E->Point) {
    FlushPoint &P = *E->Point;
    if (E->pending()) {
      // Its queue's thread may not go on before we do: send the batch for it.
      std::lock_guard<std::mutex> L(P.Queue->Lock);
      if (P.Queue->Point == E->Point)
        flushBatch(*P.Queue);
    }
    std::lock_guard<std::mutex> L(P.M);
    Before = E->AfterKernel ? P.All : P.BeforeKernel;
  }
  if (!Before)
    return Status();
  for (const Ticket &T : Before->Done)
    if (Status S = Conn->wait(T); !S.ok())
      return S;
  if (const Ticket &P = Before->Partial) {
    if (!P->Done.load(std::memory_order_acquire))
      if (Status S = Conn->wait(Conn->landed(Before->Queue, Before->Seq));
          !S.ok())
        return S;
    if (P->Done.load(std::memory_order_acquire) && !P->Result.ok())
      return P->Result;
  }
  return Status();
}

void DpuDevice::printInfo() const {
  const client::ServerInfo &I = info();
  std::printf("    ompdpu device %d\n", Index);
  std::printf("      Address:            %s\n", Conn->address().text().c_str());
  std::printf("      Host name:          %s\n", I.Hostname.c_str());
  std::printf("      ISA:                %s\n", I.Isa.c_str());
  std::printf("      Cores:              %u\n", I.Cores);
  std::printf("      Memory per client:  %.1f GiB\n",
              I.Memory / double(1ull << 30));
  std::printf("      Protocol version:   %u\n", I.Version);
  std::printf("      State:              %s\n",
              Conn->alive() ? "connected"
                            : ("failed: " + Conn->failure().message()).c_str());
}

} // namespace ompdpu::plugin
