//===- alloc_table.h - Live device allocations ------------------*- C++ -*-===//
//
// The server checks every transfer against this table, so that a wrong or
// hostile pointer or size becomes an error reply, never a stray write.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/status.h"

#include <cstdint>
#include <map>

namespace ompdpu {

/// Ranges of device memory a client may read and write.
class AllocTable {
public:
  /// Where a range came from: only Heap ranges may be freed by clients.
  enum class Origin { Heap, ImageGlobal };

  /// Record [Ptr, Ptr+Size); fails on overlap with a live range.
  Status insert(uint64_t Ptr, uint64_t Size, Origin O = Origin::Heap);
  /// Forget the heap range that starts at Ptr; returns its size.
  Expected<uint64_t> erase(uint64_t Ptr);
  /// Check that [Ptr, Ptr+Size) lies inside one live range.
  Status check(uint64_t Ptr, uint64_t Size) const;
  /// Bytes of heap memory currently recorded.
  uint64_t heapBytes() const { return HeapBytes; }
  /// Number of live ranges.
  size_t size() const { return Ranges.size(); }

private:
  struct Range {
    uint64_t Size;
    Origin O;
  };
  std::map<uint64_t, Range> Ranges; // keyed by start address
  uint64_t HeapBytes = 0;
  /// The range the last successful check() found: the pieces of one
  /// request mostly lie in one range (the plugin sub-allocates small
  /// blocks from large ones), so most checks need no tree walk. Emptied
  /// when a range goes.
  mutable uint64_t HitStart = 0, HitEnd = 0;
};

} // namespace ompdpu
