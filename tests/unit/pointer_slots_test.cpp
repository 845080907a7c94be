// The plugin's record of device words that may hold attached pointers.
#include "pointer_slots.h"

#include <gtest/gtest.h>

using ompdpu::plugin::PointerSlots;

namespace {
constexpr uint64_t kBlock = 0x7f0000100000ull;

TEST(PointerSlots, NotesOnlyValuesNearDeviceMemory) {
  PointerSlots S;
  S.allocated(kBlock, 4096);
  S.submitted(kBlock + 8, 0x4045000000000000ull); // the double 42.0
  EXPECT_FALSE(S.overlaps(kBlock, 4096));
  S.submitted(kBlock + 8, kBlock + 256); // a pointer into the block
  EXPECT_TRUE(S.overlaps(kBlock, 16));
  // A section's base may lie before its block (p[k:n]).
  S.submitted(kBlock + 64, kBlock - (1ull << 20));
  EXPECT_TRUE(S.overlaps(kBlock + 64, 8));
}

TEST(PointerSlots, NothingNotedBeforeAnyAllocation) {
  PointerSlots S;
  S.submitted(kBlock, kBlock);
  EXPECT_FALSE(S.overlaps(0, ~0ull >> 1));
}

TEST(PointerSlots, OverlapIsByteExact) {
  PointerSlots S;
  S.allocated(kBlock, 4096);
  S.submitted(kBlock + 16, kBlock);
  EXPECT_TRUE(S.overlaps(kBlock + 16, 1));
  EXPECT_TRUE(S.overlaps(kBlock + 23, 1)); // last byte of the word
  EXPECT_TRUE(S.overlaps(kBlock + 9, 8));  // first byte of the word
  EXPECT_FALSE(S.overlaps(kBlock + 24, 8));
  EXPECT_FALSE(S.overlaps(kBlock + 8, 8));
  EXPECT_FALSE(S.overlaps(kBlock + 16, 0));
}

TEST(PointerSlots, ForgottenWithTheirMemory) {
  PointerSlots S;
  S.allocated(kBlock, 8192);
  S.submitted(kBlock + 8, kBlock);
  S.submitted(kBlock + 4096, kBlock);
  S.forget(kBlock, 4096);
  EXPECT_FALSE(S.overlaps(kBlock, 4096));
  EXPECT_TRUE(S.overlaps(kBlock + 4096, 8));
}
} // namespace
