//===- memory_pool.h - Device memory sub-allocation on the host -----------===//
//
// libomptarget allocates and frees device memory for every mapped variable
// of every target region, synchronously. A round trip to the server for
// each would dominate small regions, so small blocks come from slabs that
// are allocated on the server once and carved up here. Large blocks go to
// the server directly. The server still checks every transfer against the
// slabs it handed out.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "block_table.h"
#include "common/spin_lock.h"
#include "common/status.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace ompdpu::plugin {

/// Sub-allocator of device memory in power-of-two size classes.
class DeviceMemoryPool {
public:
  /// Allocates (or frees) device memory on the server.
  using ServerAlloc = std::function<Expected<uint64_t>(uint64_t Size)>;
  using ServerFree = std::function<Status(uint64_t Ptr)>;

  /// Blocks up to this size come from slabs.
  static constexpr uint64_t kMaxPooled = 64 * 1024;
  /// Size of one slab requested from the server.
  static constexpr uint64_t kSlabSize = 4 * 1024 * 1024;

  DeviceMemoryPool(ServerAlloc A, ServerFree F)
      : AllocOnServer(std::move(A)), FreeOnServer(std::move(F)) {}

  /// Device memory for Size bytes, aligned to 64 bytes (or more).
  Expected<uint64_t> allocate(uint64_t Size);
  /// Give back a block from allocate(); Freed (when given) learns how many
  /// bytes from Ptr it spanned, 0 when that is unknown.
  Status release(uint64_t Ptr, uint64_t *Freed = nullptr);
  /// [Ptr, Ptr + Size) lies in memory this pool got from the server and has
  /// not given back: a slab, or a live large block from its start. Such a
  /// range may be read without the server refusing it.
  bool holds(uint64_t Ptr, uint64_t Size);
  /// Number of server round trips made so far (for tests and statistics).
  uint64_t serverCalls() const { return ServerCalls; }
  /// Freed large blocks kept for reuse, at most this many bytes: a program
  /// that maps the same big arrays region after region then allocates on
  /// the server only once.
  static constexpr uint64_t kLargeCacheBytes = 512ull << 20;

private:
  static constexpr unsigned kMinShift = 6; // 64-byte blocks and alignment
  static constexpr unsigned kClasses = 11; // 64 B .. 64 KiB
  static unsigned classOf(uint64_t Size);

  ServerAlloc AllocOnServer;
  ServerFree FreeOnServer;
  /// Taken twice per mapped variable (allocate, release). Large blocks are
  /// allocated and freed on the server outside it; a new slab (every
  /// 4 MiB of small blocks) under it.
  SpinLock M;
  std::array<std::vector<uint64_t>, kClasses> FreeLists;
  BlockTable Live; // pooled block -> class
  /// Large blocks: live ones with their rounded size, freed ones by size.
  std::unordered_map<uint64_t, uint64_t> LiveLarge;
  std::unordered_multimap<uint64_t, uint64_t> FreeLarge; // size -> block
  std::unordered_map<uint64_t, uint64_t> CachedLarge;    // block -> size
  uint64_t FreeLargeBytes = 0;
  /// Return every cached large block to the server.
  Status dropLargeCache();
  /// Give every slab whose carved blocks are all free back to the server
  /// (their blocks leave the free lists); whether any went.
  bool reclaimEmptySlabs();
  /// First, the server's answer to an allocation of Size; when it failed
  /// and the pool holds free memory (cached large blocks, empty slabs), it
  /// goes back and Size is asked again (under M).
  Expected<uint64_t> retryWithoutCache(Expected<uint64_t> First, uint64_t Size);
  /// Ptr lies in a slab (under M).
  bool inSlab(uint64_t Ptr) const;
  /// Ptr is a free pooled block (under M; the error path only).
  bool onFreeList(uint64_t Ptr) const;
  struct Slab {
    uint64_t Start;  ///< kSlabSize bytes from the server
    uint64_t Carved; ///< bytes of the blocks cut from it so far
  };
  uint64_t SlabCursor = 0, SlabEnd = 0; // carving Slabs.back(), if non-zero
  std::vector<Slab> Slabs;
  std::atomic<uint64_t> ServerCalls{0};
};

} // namespace ompdpu::plugin
