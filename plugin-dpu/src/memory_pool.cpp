//===- memory_pool.cpp - Device memory sub-allocation on the host ---------===//
#include "memory_pool.h"

#include "common/log.h"

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

Expected<uint64_t> DeviceMemoryPool::retryWithoutCache(Expected<uint64_t> First,
                                                       uint64_t Size) {
  if (First || !FreeLargeBytes)
    return First;
  // The cache may hold the memory the server misses: give it back.
  (void)dropLargeCache();
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
      Slabs.push_back(*Slab);
      SlabCursor = *Slab;
      SlabEnd = *Slab + kSlabSize;
      Aligned = (SlabCursor + BlockSize - 1) & ~(BlockSize - 1);
    }
    Ptr = Aligned;
    SlabCursor = Aligned + BlockSize;
  }
  Live.insert(Ptr, static_cast<uint8_t>(C));
  return Ptr;
}

bool DeviceMemoryPool::holds(uint64_t Ptr, uint64_t Size) {
  std::lock_guard<SpinLock> L(M);
  for (uint64_t Slab : Slabs)
    if (Ptr >= Slab && Size <= kSlabSize && Ptr - Slab <= kSlabSize - Size)
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
