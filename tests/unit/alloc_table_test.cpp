// The allocation table that guards every transfer on the server.
#include "common/alloc_table.h"

#include <gtest/gtest.h>

using ompdpu::AllocTable;

TEST(AllocTable, ChecksRangesInsideAllocations) {
  AllocTable T;
  ASSERT_TRUE(T.insert(1000, 100).ok());
  EXPECT_TRUE(T.check(1000, 100).ok());
  EXPECT_TRUE(T.check(1050, 50).ok());
  EXPECT_TRUE(T.check(1099, 1).ok());
  EXPECT_TRUE(T.check(1000, 0).ok());
  EXPECT_FALSE(T.check(1050, 51).ok()) << "runs past the end";
  EXPECT_FALSE(T.check(999, 2).ok()) << "starts before";
  EXPECT_FALSE(T.check(1100, 1).ok()) << "one past the end";
  EXPECT_FALSE(T.check(5000, 1).ok()) << "nowhere";
  EXPECT_FALSE(T.check(1050, ~0ull).ok()) << "wraps around";
}

TEST(AllocTable, ChecksAfterEraseSeeTheRangeGone) {
  AllocTable T;
  ASSERT_TRUE(T.insert(1000, 100).ok());
  ASSERT_TRUE(T.insert(2000, 100).ok());
  EXPECT_TRUE(T.check(1010, 8).ok());
  EXPECT_TRUE(T.check(1020, 8).ok()) << "same range again";
  EXPECT_FALSE(T.check(1095, 8).ok()) << "past the end of the same range";
  ASSERT_TRUE(T.erase(1000));
  EXPECT_FALSE(T.check(1020, 8).ok()) << "the range checked last is gone";
  EXPECT_TRUE(T.check(2000, 8).ok());
  AllocTable Empty;
  EXPECT_FALSE(Empty.check(0, 0).ok());
}

TEST(AllocTable, RejectsOverlapsAndTracksBytes) {
  AllocTable T;
  ASSERT_TRUE(T.insert(1000, 100).ok());
  EXPECT_FALSE(T.insert(1050, 100).ok());
  EXPECT_FALSE(T.insert(950, 51).ok());
  EXPECT_TRUE(T.insert(1100, 10).ok());
  EXPECT_TRUE(T.insert(900, 100).ok());
  EXPECT_EQ(T.heapBytes(), 210u);
  EXPECT_FALSE(T.check(990, 20).ok()) << "spans two allocations";
}

TEST(AllocTable, EraseOnlyHeapStarts) {
  AllocTable T;
  ASSERT_TRUE(T.insert(1000, 100).ok());
  ASSERT_TRUE(T.insert(5000, 8, AllocTable::Origin::ImageGlobal).ok());
  EXPECT_FALSE(T.erase(1001)) << "not the start";
  EXPECT_FALSE(T.erase(5000)) << "image globals are not freeable";
  auto Size = T.erase(1000);
  ASSERT_TRUE(Size);
  EXPECT_EQ(*Size, 100u);
  EXPECT_FALSE(T.check(1000, 1).ok());
  EXPECT_FALSE(T.erase(1000)) << "double free";
  EXPECT_EQ(T.heapBytes(), 0u);
  EXPECT_TRUE(T.check(5000, 8).ok());
}

TEST(AllocTable, ZeroSizedAllocationsOwnTheirAddress) {
  AllocTable T;
  ASSERT_TRUE(T.insert(1000, 0).ok());
  EXPECT_FALSE(T.insert(1000, 4).ok());
  EXPECT_TRUE(T.erase(1000));
}
