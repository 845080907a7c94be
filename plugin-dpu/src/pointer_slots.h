//===- pointer_slots.h - Device words that may hold attached pointers -----===//
//
// libomptarget 14 attaches a pointer member of a mapped struct by writing
// the device pointer into the struct's device copy (an 8-byte submit) and,
// when it later retrieves that struct, puts the host's pointer back from a
// shadow copy right after the retrieve call returns, before it synchronizes
// the queue. A retrieve that lands after that call would overwrite the
// restored host pointer with the device's. Every such word received an
// 8-byte submit, so retrieves covering a word that did must land before
// they return; all others may land as late as synchronize.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <set>

namespace ompdpu::plugin {

class PointerSlots {
public:
  /// An 8-byte submit went to device address Dst.
  void note(uint64_t Dst) {
    std::lock_guard<std::mutex> L(M);
    Slots.insert(Dst);
    Count.store(Slots.size(), std::memory_order_relaxed);
  }
  /// Some noted word overlaps [Ptr, Ptr + Size).
  bool overlaps(uint64_t Ptr, uint64_t Size) const {
    if (Count.load(std::memory_order_relaxed) == 0 || Size == 0)
      return false;
    std::lock_guard<std::mutex> L(M);
    auto It = Slots.lower_bound(Ptr >= 7 ? Ptr - 7 : 0);
    return It != Slots.end() && *It < Ptr + Size;
  }
  /// Device memory [Ptr, Ptr + Size) was freed.
  void forget(uint64_t Ptr, uint64_t Size) {
    if (Count.load(std::memory_order_relaxed) == 0)
      return;
    std::lock_guard<std::mutex> L(M);
    Slots.erase(Slots.lower_bound(Ptr), Slots.lower_bound(Ptr + Size));
    Count.store(Slots.size(), std::memory_order_relaxed);
  }

private:
  mutable std::mutex M;
  std::set<uint64_t> Slots;
  std::atomic<size_t> Count{0};
};

} // namespace ompdpu::plugin
