//===- device_memory.h - One session's device memory ------------*- C++ -*-===//
//
// What a client may allocate, free, read and write: every allocation is
// recorded, and every transfer is checked against the records, so that a
// wrong or hostile pointer or size becomes an error, never a stray access.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/alloc_table.h"
#include "common/status.h"

#include <cstdint>

namespace ompdpu::server {

class DeviceMemory {
public:
  /// Allocations at least this big come straight from mmap (2 MiB-aligned,
  /// huge pages), so that freeing them gives the memory back at once.
  static constexpr uint64_t kMmapThreshold = 1 << 20;

  explicit DeviceMemory(uint64_t Limit) : Limit(Limit) {}
  ~DeviceMemory();
  DeviceMemory(const DeviceMemory &) = delete;
  DeviceMemory &operator=(const DeviceMemory &) = delete;

  /// Size bytes (at least 1), 64-byte aligned; ErrorCode::NoMemory beyond
  /// the limit or when the system has none.
  Expected<uint64_t> allocate(uint64_t Size);
  /// Free an allocation made here; ErrorCode::NotFound for anything else.
  Status release(uint64_t Ptr);
  /// Record a range the session owns otherwise (an image's global): it may
  /// be read and written, not freed.
  Status adopt(uint64_t Ptr, uint64_t Size) {
    return Table.insert(Ptr, Size, AllocTable::Origin::ImageGlobal);
  }
  /// [Ptr, Ptr + Size) lies within one live range.
  Status check(uint64_t Ptr, uint64_t Size) const {
    return Table.check(Ptr, Size);
  }
  uint64_t bytesInUse() const { return Table.heapBytes(); }

private:
  uint64_t Limit;
  AllocTable Table;
};

} // namespace ompdpu::server
