//===- alloc_table.cpp - Live device allocations --------------------------===//
#include "common/alloc_table.h"

#include "common/log.h"

namespace ompdpu {

Status AllocTable::insert(uint64_t Ptr, uint64_t Size, Origin O) {
  if (Size == 0)
    Size = 1; // zero-sized objects still own their address
  if (Ptr + Size < Ptr)
    return Status::error("range wraps around the address space");
  auto Next = Ranges.lower_bound(Ptr);
  if (Next != Ranges.end() && Next->first < Ptr + Size)
    return Status::error(format("range 0x%lx+%lu overlaps a live allocation",
                                (unsigned long)Ptr, (unsigned long)Size));
  if (Next != Ranges.begin()) {
    auto Prev = std::prev(Next);
    if (Prev->first + Prev->second.Size > Ptr)
      return Status::error(format("range 0x%lx+%lu overlaps a live allocation",
                                  (unsigned long)Ptr, (unsigned long)Size));
  }
  Ranges.emplace(Ptr, Range{Size, O});
  if (O == Origin::Heap)
    HeapBytes += Size;
  return Status();
}

Expected<uint64_t> AllocTable::erase(uint64_t Ptr) {
  auto It = Ranges.find(Ptr);
  if (It == Ranges.end())
    return Status::error(format("0x%lx is not the start of a live allocation",
                                (unsigned long)Ptr));
  if (It->second.O != Origin::Heap)
    return Status::error(format("0x%lx is an image global, not heap memory",
                                (unsigned long)Ptr));
  uint64_t Size = It->second.Size;
  HeapBytes -= Size;
  Ranges.erase(It);
  HitStart = HitEnd = 0;
  return Size;
}

Status AllocTable::check(uint64_t Ptr, uint64_t Size) const {
  if (Ptr + Size < Ptr)
    return Status::error("range wraps around the address space");
  if (Ptr >= HitStart && Ptr < HitEnd && Ptr + Size <= HitEnd)
    return Status();
  auto It = Ranges.upper_bound(Ptr);
  if (It != Ranges.begin()) {
    --It;
    uint64_t End = It->first + It->second.Size;
    if (Ptr >= It->first && Ptr + Size <= End) {
      HitStart = It->first;
      HitEnd = End;
      return Status();
    }
    if (Ptr >= It->first && Ptr < End)
      return Status::error(format(
          "range 0x%lx+%lu runs past the end of its allocation 0x%lx+%lu",
          (unsigned long)Ptr, (unsigned long)Size, (unsigned long)It->first,
          (unsigned long)It->second.Size));
  }
  return Status::error(format("0x%lx+%lu is not inside any live allocation",
                              (unsigned long)Ptr, (unsigned long)Size));
}

} // namespace ompdpu
