//===- pointer_slots.h - Device words that may hold attached pointers -----===//
//
// libomptarget 14 attaches a pointer member of a mapped struct by writing
// the device pointer into the struct's device copy (an 8-byte submit) and,
// when it later retrieves that struct, puts the host's pointer back from a
// shadow copy right after the retrieve call returns, before it synchronizes
// the queue. A retrieve that lands after that call would overwrite the
// restored host pointer with the device's. So retrieves covering a word
// that may hold an attached pointer must land before they return; all
// others may land as late as synchronize.
//
// An attached pointer is the device address of the pointee section's start
// minus its offset in the host array: it lies within 4 GiB of this device's
// memory unless the section starts more than 4 GiB into its array. 8-byte
// submits of other values (a mapped double or long) are not noted, so their
// retrieves keep riding with the region's reply.
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
  /// Device memory [Ptr, Ptr + Size) was handed out.
  void allocated(uint64_t Ptr, uint64_t Size) {
    uint64_t Lo = Low.load(std::memory_order_relaxed);
    while (Ptr < Lo && !Low.compare_exchange_weak(Lo, Ptr))
      ;
    uint64_t Hi = High.load(std::memory_order_relaxed);
    while (Ptr + Size > Hi && !High.compare_exchange_weak(Hi, Ptr + Size))
      ;
  }
  /// An 8-byte submit of Value went to device address Dst.
  void submitted(uint64_t Dst, uint64_t Value) {
    uint64_t Lo = Low.load(std::memory_order_relaxed);
    uint64_t Hi = High.load(std::memory_order_relaxed);
    if (Lo > Hi || Value + kReach < Lo || Value > Hi + kReach)
      return;
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
  static constexpr uint64_t kReach = uint64_t(4) << 30;
  std::atomic<uint64_t> Low{~uint64_t(0)}, High{0}; ///< device memory's span
  mutable std::mutex M;
  std::set<uint64_t> Slots;
  std::atomic<size_t> Count{0};
};

} // namespace ompdpu::plugin
