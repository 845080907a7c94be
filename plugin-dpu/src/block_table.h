//===- block_table.h - Live pooled blocks, without a node per block -------===//
//
// The memory pool looks up, inserts and erases a block for every mapped
// variable of every region. A std::unordered_map allocates a node each
// time; this open-addressing table (linear probing, deletion by backward
// shift) allocates only when it grows.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ompdpu::plugin {

/// Maps a block address (never 0) to its size class.
class BlockTable {
public:
  BlockTable() { Slots.resize(64); }

  void insert(uint64_t Addr, uint8_t Class) {
    if ((Count + 1) * 2 > Slots.size())
      grow();
    std::size_t I = home(Addr);
    while (Slots[I].Addr && Slots[I].Addr != Addr)
      I = next(I);
    if (!Slots[I].Addr)
      ++Count;
    Slots[I] = {Addr, Class};
  }

  /// The class of Addr, or -1 when Addr is not a live block.
  int find(uint64_t Addr) const {
    for (std::size_t I = home(Addr); Slots[I].Addr; I = next(I))
      if (Slots[I].Addr == Addr)
        return Slots[I].Class;
    return -1;
  }

  /// Remove Addr (present or not).
  void erase(uint64_t Addr) {
    std::size_t I = home(Addr);
    while (Slots[I].Addr != Addr) {
      if (!Slots[I].Addr)
        return;
      I = next(I);
    }
    // Shift later members of the probe run back into the hole, so that
    // lookups never stop early at it.
    std::size_t Hole = I;
    for (std::size_t J = next(Hole); Slots[J].Addr; J = next(J)) {
      std::size_t Home = home(Slots[J].Addr);
      bool Movable =
          Hole <= J ? (Home <= Hole || Home > J) : (Home <= Hole && Home > J);
      if (Movable) {
        Slots[Hole] = Slots[J];
        Hole = J;
      }
    }
    Slots[Hole] = {};
    --Count;
  }

  std::size_t size() const { return Count; }

private:
  struct Slot {
    uint64_t Addr = 0;
    uint8_t Class = 0;
  };
  std::size_t home(uint64_t Addr) const {
    // Blocks are 64-byte aligned: mix the bits above before masking.
    uint64_t H = (Addr >> 6) * 0x9E3779B97F4A7C15ull;
    return static_cast<std::size_t>(H >> 32) & (Slots.size() - 1);
  }
  std::size_t next(std::size_t I) const { return (I + 1) & (Slots.size() - 1); }
  void grow() {
    std::vector<Slot> Old(Slots.size() * 2);
    Old.swap(Slots);
    Count = 0;
    for (const Slot &S : Old)
      if (S.Addr)
        insert(S.Addr, S.Class);
  }

  std::vector<Slot> Slots; // size: a power of two, at most half full
  std::size_t Count = 0;
};

} // namespace ompdpu::plugin
