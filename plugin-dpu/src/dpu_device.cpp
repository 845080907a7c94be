//===- dpu_device.cpp - One DPU as an OpenMP device -----------------------===//
#include "dpu_device.h"

#include "common/elf_image.h"
#include "common/log.h"

#include <cstdio>
#include <cstring>

namespace ompdpu::plugin {

using client::Ticket;

DpuDevice::DpuDevice(int32_t Index, std::unique_ptr<client::Connection> C)
    : Index(Index), Conn(std::move(C)),
      Pool(
          [this](uint64_t Size) -> Expected<uint64_t> {
            Ticket T = Conn->alloc(Size, abi::TARGET_ALLOC_DEFAULT);
            if (Status S = Conn->wait(T); !S.ok())
              return S;
            return T->Value;
          },
          [this](uint64_t Ptr) { return Conn->wait(Conn->free(Ptr)); }),
      Results(Conn->tracing()) {}

DpuDevice::~DpuDevice() {
  if (Results.Trace && (Results.Taken || Results.Missed))
    log(LogLevel::Info,
        "%s: results asked for with their launch: %lu taken, %lu not",
        name().c_str(), (unsigned long)Results.Taken.load(),
        (unsigned long)Results.Missed.load());
  delete SpareQueue.load();
}

std::string DpuDevice::name() const {
  return format("device %d (%s)", Index, Conn->address().text().c_str());
}

uint16_t DpuDevice::machine() const { return machineForIsa(info().Isa); }

AsyncQueue *DpuDevice::queueOf(__tgt_async_info *Async) {
  if (Async->Queue)
    return static_cast<AsyncQueue *>(Async->Queue);
  // The queue the last synchronize() gave back, taken without a lock: a
  // thread that offloads region after region never takes M here.
  if (AsyncQueue *Spare =
          SpareQueue.exchange(nullptr, std::memory_order_acquire)) {
    Async->Queue = Spare;
    return Spare;
  }
  std::lock_guard<std::mutex> L(M);
  std::unique_ptr<AsyncQueue> Q;
  if (!FreeQueues.empty()) {
    Q = std::move(FreeQueues.back());
    FreeQueues.pop_back();
  } else {
    Q = std::make_unique<AsyncQueue>();
    Q->Id = NextQueueId++;
  }
  Async->Queue = Q.release();
  return static_cast<AsyncQueue *>(Async->Queue);
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
  P.Left.notify_all();
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

template <typename IssueFn>
Status DpuDevice::perform(__tgt_async_info *Async, IssueFn F) {
  if (!Async)
    return Conn->wait(F(0u, 0u));
  AsyncQueue *Q = queueOf(Async);
  Q->Launch.close();
  flushBatch(*Q);
  track(*Q, F(Q->Id, Q->NextSeq++));
  // Fail fast when the operation could not even be sent.
  const Ticket &T = Q->InFlight.back();
  if (T->Done.load() && !T->Result.ok())
    return T->Result;
  return Status();
}

Expected<__tgt_target_table *>
DpuDevice::loadBinary(__tgt_device_image *Image) {
  size_t Size = static_cast<char *>(Image->ImageEnd) -
                static_cast<char *>(Image->ImageStart);
  Ticket T = Conn->loadImage(Image->ImageStart, Size);
  if (Status S = Conn->wait(T); !S.ok())
    return S.withContext("cannot load image");
  std::vector<protocol::EntryInfo> Entries;
  if (Status S = protocol::decodeEntries(T->Payload.data(), T->Payload.size(),
                                         Entries);
      !S.ok())
    return S.withContext("cannot load image");
  size_t HostCount = Image->EntriesEnd - Image->EntriesBegin;
  if (Entries.size() != HostCount)
    return Status::error(format("cannot load image: it has %zu offload "
                                "entries, the host expects %zu",
                                Entries.size(), HostCount));
  std::lock_guard<std::mutex> L(M);
  ImageTable &IT = Images.emplace_back();
  IT.Entries.reserve(Entries.size());
  for (size_t K = 0; K < Entries.size(); ++K) {
    const protocol::EntryInfo &E = Entries[K];
    const __tgt_offload_entry &Host = Image->EntriesBegin[K];
    if (Host.size != E.Size)
      return Status::error(format("cannot load image: entry '%s' has %lu "
                                  "bytes on the device, %zu on the host",
                                  E.Name.c_str(), (unsigned long)E.Size,
                                  Host.size));
    if ((E.Size == 0) != (E.Kernel != 0))
      return Status::error(format("cannot load image: entry '%s' is %s without "
                                  "a kernel handle",
                                  E.Name.c_str(),
                                  E.Size == 0 ? "a kernel" : "a global"));
    IT.Names.push_back(E.Name);
    void *Addr = reinterpret_cast<void *>(E.Addr);
    if (E.Kernel)
      Addr = &IT.Kernels.emplace_back(E.Kernel);
    IT.Entries.push_back({Addr, IT.Names.back().data(), E.Size, E.Flags, 0});
  }
  IT.Table.EntriesBegin = IT.Entries.data();
  IT.Table.EntriesEnd = IT.Entries.data() + IT.Entries.size();
  return &IT.Table;
}

Expected<void *> DpuDevice::alloc(int64_t Size, int32_t Kind) {
  if (Kind == abi::TARGET_ALLOC_HOST || Kind == abi::TARGET_ALLOC_SHARED)
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
                         __tgt_async_info *Async) {
  if (Size < 0)
    return Status::error("negative transfer size");
  if (Size == sizeof(void *)) {
    uint64_t Value;
    std::memcpy(&Value, Src, sizeof(Value));
    Slots.submitted(reinterpret_cast<uint64_t>(Dst), Value);
  }
  if (Async && Size <= kBatchPieceMax) {
    // Copying a few bytes is cheaper than a message of their own.
    AsyncQueue *Q = queueOf(Async);
    Q->Launch.close();
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
  return perform(Async, [&](uint32_t Q, uint32_t Seq) {
    return Conn->submit(reinterpret_cast<uint64_t>(Dst), Src, Size, Q, Seq);
  });
}

Status DpuDevice::retrieve(void *Dst, const void *Src, int64_t Size,
                           __tgt_async_info *Async) {
  if (Size < 0)
    return Status::error("negative transfer size");
  if (!Async)
    return perform(Async, [&](uint32_t Q, uint32_t Seq) {
      return Conn->retrieve(Dst, reinterpret_cast<uint64_t>(Src), Size, Q, Seq);
    });
  AsyncQueue *Q = queueOf(Async);
  Status S = queueRetrieve(*Q, Dst, Src, Size);
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
  flushBatch(Q);
  // The server runs a queue's operations in order, but replies may be
  // handled out of order: wait for each.
  for (const Ticket &T : Q.InFlight)
    if (Status S = Conn->wait(T); !S.ok())
      return S;
  return Status();
}

Status DpuDevice::exchange(const void *Src, DpuDevice &Dst, void *DstPtr,
                           int64_t Size, __tgt_async_info *Async) {
  if (Size < 0)
    return Status::error("negative transfer size");
  return perform(Async, [&](uint32_t Q, uint32_t Seq) {
    return Conn->exchange(reinterpret_cast<uint64_t>(Src), Size, Dst.info(),
                          reinterpret_cast<uint64_t>(DstPtr), Q, Seq);
  });
}

Status DpuDevice::launch(void *Entry, void **Args, ptrdiff_t *Offsets,
                         int32_t NumArgs, __tgt_async_info *Async) {
  auto *Kernel = static_cast<KernelRecord *>(Entry);
  size_t Count = NumArgs > 0 ? static_cast<size_t>(NumArgs) : 0;
  auto Fill = [&](uint64_t *Values) {
    for (size_t K = 0; K < Count; ++K)
      Values[K] = reinterpret_cast<uint64_t>(Args[K]) +
                  static_cast<uint64_t>(Offsets ? Offsets[K] : 0);
  };
  if (Async) {
    // Joins the queue's batch, after the region's small submits. What
    // followed the kernel's last launches decides when it leaves (see
    // KernelResults::Follow).
    AsyncQueue *Q = queueOf(Async);
    Q->Launch.finish(Results);
    AsyncQueue::PendingBatch &B = Q->Batch;
    if (B.closedToSubmits())
      flushBatch(*Q);
    B.Kernel = Kernel->Handle;
    B.Args.resize(Count);
    Fill(B.Args.data());
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
  // Most kernels take a few arguments: no allocation before the Run leaves.
  constexpr size_t kInlineArgs = 16;
  uint64_t Inline[kInlineArgs];
  std::vector<uint64_t> Many;
  uint64_t *Values = Inline;
  if (Count > kInlineArgs) {
    Many.resize(Count);
    Values = Many.data();
  }
  Fill(Values);
  return Conn->wait(Conn->run(Kernel->Handle, Values, Count, 0, 0));
}

Status DpuDevice::synchronize(__tgt_async_info *Async) {
  auto *Q = static_cast<AsyncQueue *>(Async->Queue);
  if (!Q)
    return Status();
  flushBatch(*Q);
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
  Async->Queue = nullptr;
  if (AsyncQueue *Old = SpareQueue.exchange(Q, std::memory_order_acq_rel)) {
    std::lock_guard<std::mutex> L(M);
    FreeQueues.emplace_back(Old);
  }
  return First;
}

Status DpuDevice::recordEvent(Event *E, __tgt_async_info *Async) {
  E->Before.reset();
  E->Point.reset();
  E->QueueId = 0;
  if (!Async || !Async->Queue)
    return Status();
  auto *Q = static_cast<AsyncQueue *>(Async->Queue);
  Q->Launch.close();
  E->QueueId = Q->Id;
  E->QueueEpoch = Q->Epoch;
  if (Q->Batch.empty()) {
    E->Before = snapshot(*Q);
  } else {
    // Known when the batch leaves, at the queue's next operation that
    // cannot join it or at synchronize.
    if (!Q->Point)
      Q->Point = std::make_shared<FlushPoint>();
    E->Point = Q->Point;
    E->AfterKernel = Q->Batch.Kernel != 0;
    Q->Point->AnyAfterKernel |= E->AfterKernel;
  }
  return Status();
}

Status DpuDevice::waitEvent(Event *E, __tgt_async_info *Async) {
  auto *Mine = Async ? static_cast<AsyncQueue *>(Async->Queue) : nullptr;
  if (Mine) {
    Mine->Launch.close();
    // Operations of one queue already run in order: nothing to wait for.
    if (E->QueueId && Mine->Id == E->QueueId && Mine->Epoch == E->QueueEpoch)
      return Status();
  }
  std::shared_ptr<const Horizon> Before = E->Before;
  if (E->Point) {
    FlushPoint &P = *E->Point;
    std::unique_lock<std::mutex> L(P.M);
    if (!P.Sent && Mine) {
      // Send our own batch before blocking: the event's queue may be
      // waiting, the same way, for what ours holds.
      L.unlock();
      flushBatch(*Mine);
      L.lock();
    }
    P.Left.wait(L, [&P] { return P.Sent; });
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
