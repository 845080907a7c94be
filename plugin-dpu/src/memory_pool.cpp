//===- memory_pool.cpp - Device memory sub-allocation on the host ---------===//
#include "memory_pool.h"

#include "common/log.h"

#include <algorithm>

namespace ompdpu::plugin {

unsigned DeviceMemoryPool::classOf(uint64_t Size) {
  unsigned C = 0;
  while ((uint64_t(1) << (C + kMinShift)) < Size)
    ++C;
  return C;
}

Status DeviceMemoryPool::dropLargeCache() {
  Status First;
  for (auto &[Size, Ptr] : FreeLarge) {
    ++ServerCalls;
    if (Status S = FreeOnServer(Ptr); !S.ok() && First.ok())
      First = S;
  }
  FreeLarge.clear();
  CachedLarge.clear();
  FreeLargeBytes = 0;
  return First;
}

bool DeviceMemoryPool::reclaimEmptySlabs() {
  // Only when the server is full: the hot paths keep no per-slab counts.
  std::vector<size_t> ByStart(Slabs.size());
  for (size_t K = 0; K < Slabs.size(); ++K)
    ByStart[K] = K;
  std::sort(ByStart.begin(), ByStart.end(), [this](size_t A, size_t B) {
    return Slabs[A].Start < Slabs[B].Start;
  });
  auto SlabOf = [&](uint64_t Ptr) {
    auto It = std::upper_bound(
        ByStart.begin(), ByStart.end(), Ptr,
        [this](uint64_t P, size_t K) { return P < Slabs[K].Start; });
    return *(It - 1); // every pooled block lies in a slab
  };
  std::vector<uint64_t> FreeBytes(Slabs.size());
  for (unsigned C = 0; C < kClasses; ++C)
    for (uint64_t Ptr : FreeLists[C])
      FreeBytes[SlabOf(Ptr)] += uint64_t(1) << (C + kMinShift);
  std::vector<bool> Empty(Slabs.size());
  bool Any = false;
  for (size_t K = 0; K < Slabs.size(); ++K)
    Any |= Empty[K] = FreeBytes[K] == Slabs[K].Carved;
  if (!Any)
    return false;
  for (auto &List : FreeLists)
    List.erase(std::remove_if(List.begin(), List.end(),
                              [&](uint64_t P) { return Empty[SlabOf(P)]; }),
               List.end());
  if (SlabCursor && Empty[Slabs.size() - 1])
    SlabCursor = SlabEnd = 0;
  std::vector<Slab> Kept;
  for (size_t K = 0; K < Slabs.size(); ++K) {
    if (!Empty[K]) {
      Kept.push_back(Slabs[K]);
      continue;
    }
    ++ServerCalls;
    (void)FreeOnServer(Slabs[K].Start); // a failure leaves it unusable
  }
  Slabs = std::move(Kept); // in order: the one being carved stays last
  return true;
}

Expected<uint64_t> DeviceMemoryPool::retryWithoutCache(Expected<uint64_t> First,
                                                       uint64_t Size) {
  if (First)
    return First;
  // The pool may hold the memory the server misses: give it back.
  bool Gave = FreeLargeBytes != 0;
  if (Gave)
    (void)dropLargeCache();
  Gave |= reclaimEmptySlabs();
  if (!Gave)
    return First;
  ++ServerCalls;
  return AllocOnServer(Size);
}

Expected<uint64_t> DeviceMemoryPool::allocate(uint64_t Size) {
  if (Size > kMaxPooled) {
    // Sizes rounded to 64 KiB, so that nearly equal arrays share blocks.
    uint64_t Rounded = (Size + kMaxPooled - 1) & ~(kMaxPooled - 1);
    std::unique_lock<SpinLock> L(M);
    auto It = FreeLarge.find(Rounded);
    if (It != FreeLarge.end()) {
      uint64_t Ptr = It->second;
      FreeLarge.erase(It);
      CachedLarge.erase(Ptr);
      FreeLargeBytes -= Rounded;
      LiveLarge[Ptr] = Rounded;
      return Ptr;
    }
    // Other threads need not wait (spinning) for this round trip.
    L.unlock();
    ++ServerCalls;
    auto P = AllocOnServer(Rounded);
    L.lock();
    P = retryWithoutCache(std::move(P), Rounded);
    if (P)
      LiveLarge[*P] = Rounded;
    return P;
  }
  unsigned C = classOf(Size ? Size : 1);
  uint64_t BlockSize = uint64_t(1) << (C + kMinShift);
  std::lock_guard<SpinLock> L(M);
  std::vector<uint64_t> &List = FreeLists[C];
  uint64_t Ptr;
  if (!List.empty()) {
    Ptr = List.back();
    List.pop_back();
  } else {
    // Blocks are carved in address order; a block never straddles slabs,
    // so a transfer within a block is within one server allocation.
    uint64_t Aligned = (SlabCursor + BlockSize - 1) & ~(BlockSize - 1);
    if (!SlabCursor || Aligned + BlockSize > SlabEnd) {
      ++ServerCalls;
      auto Slab = retryWithoutCache(AllocOnServer(kSlabSize), kSlabSize);
      if (!Slab) {
        // Less room on the device than a slab: this block on its own.
        ++ServerCalls;
        auto P = AllocOnServer(BlockSize);
        if (P)
          LiveLarge[*P] = BlockSize;
        return P;
      }
      Slabs.push_back({*Slab, 0});
      SlabCursor = *Slab;
      SlabEnd = *Slab + kSlabSize;
      Aligned = (SlabCursor + BlockSize - 1) & ~(BlockSize - 1);
    }
    Ptr = Aligned;
    SlabCursor = Aligned + BlockSize;
    Slabs.back().Carved += BlockSize;
  }
  Live.insert(Ptr, static_cast<uint8_t>(C));
  return Ptr;
}

bool DeviceMemoryPool::inSlab(uint64_t Ptr) const {
  return std::any_of(Slabs.begin(), Slabs.end(), [Ptr](const Slab &S) {
    return Ptr - S.Start < kSlabSize;
  });
}

bool DeviceMemoryPool::onFreeList(uint64_t Ptr) const {
  return std::any_of(FreeLists.begin(), FreeLists.end(), [Ptr](auto &List) {
    return std::find(List.begin(), List.end(), Ptr) != List.end();
  });
}

bool DeviceMemoryPool::holds(uint64_t Ptr, uint64_t Size) {
  std::lock_guard<SpinLock> L(M);
  for (const Slab &S : Slabs)
    if (Ptr >= S.Start && Size <= kSlabSize &&
        Ptr - S.Start <= kSlabSize - Size)
      return true;
  auto Large = LiveLarge.find(Ptr);
  return Large != LiveLarge.end() && Size <= Large->second;
}

Status DeviceMemoryPool::release(uint64_t Ptr, uint64_t *Freed) {
  if (Freed)
    *Freed = 0;
  std::unique_lock<SpinLock> L(M);
  int Class = Live.find(Ptr);
  if (Class < 0) {
    auto Large = LiveLarge.find(Ptr);
    if (Large != LiveLarge.end()) {
      uint64_t Rounded = Large->second;
      LiveLarge.erase(Large);
      if (Freed)
        *Freed = Rounded;
      if (Rounded > kMaxPooled &&
          FreeLargeBytes + Rounded <= kLargeCacheBytes) {
        FreeLarge.emplace(Rounded, Ptr);
        CachedLarge[Ptr] = Rounded;
        FreeLargeBytes += Rounded;
        return Status();
      }
    } else if (CachedLarge.count(Ptr)) {
      return Status::error(
          format("0x%lx was already freed", (unsigned long)Ptr));
    } else if (inSlab(Ptr)) {
      // Never to the server: a slab's first block starts where the slab
      // does, and freeing that would free every block carved from it.
      return Status::error(format("0x%lx %s", (unsigned long)Ptr,
                                  onFreeList(Ptr) ? "was already freed"
                                                  : "is not a block that "
                                                    "was allocated"));
    }
    L.unlock();
    ++ServerCalls;
    return FreeOnServer(Ptr);
  }
  FreeLists[Class].push_back(Ptr);
  Live.erase(Ptr);
  if (Freed)
    *Freed = uint64_t(1) << (kMinShift + Class);
  return Status();
}

} // namespace ompdpu::plugin
