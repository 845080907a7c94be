// The plugin's device memory sub-allocator, against a fake server.
#include "memory_pool.h"

#include <gtest/gtest.h>
#include <map>
#include <random>
#include <unordered_map>

using namespace ompdpu;
using ompdpu::plugin::BlockTable;
using ompdpu::plugin::DeviceMemoryPool;

namespace {
/// A server that hands out addresses from a counter, with a byte limit.
struct FakeServer {
  uint64_t Next = 1 << 20, Limit = ~0ull, InUse = 0;
  std::map<uint64_t, uint64_t> Live;
  DeviceMemoryPool pool() {
    return DeviceMemoryPool(
        [this](uint64_t Size) -> Expected<uint64_t> {
          if (InUse + Size > Limit)
            return Status::error("out of device memory");
          uint64_t P = Next;
          Next += (Size + 4095) & ~4095ull;
          Live[P] = Size;
          InUse += Size;
          return P;
        },
        [this](uint64_t Ptr) {
          auto It = Live.find(Ptr);
          if (It == Live.end())
            return Status::error("not allocated");
          InUse -= It->second;
          Live.erase(It);
          return Status();
        });
  }
};
} // namespace

TEST(MemoryPool, SmallBlocksComeFromSlabsAndAreReused) {
  FakeServer S;
  DeviceMemoryPool P = S.pool();
  std::map<uint64_t, uint64_t> Seen;
  for (uint64_t Size : {1, 8, 64, 65, 100, 4096, 65536}) {
    auto A = P.allocate(Size);
    ASSERT_TRUE(A);
    EXPECT_EQ(*A % 64, 0u) << "64-byte alignment";
    Seen[*A] = Size;
  }
  EXPECT_EQ(P.serverCalls(), 1u) << "one slab serves them all";
  // Blocks never overlap.
  uint64_t End = 0;
  for (auto &[Ptr, Size] : Seen) {
    EXPECT_GE(Ptr, End);
    End = Ptr + Size;
  }
  uint64_t First = Seen.begin()->first;
  ASSERT_TRUE(P.release(First).ok());
  auto Again = P.allocate(Seen.begin()->second);
  ASSERT_TRUE(Again);
  EXPECT_EQ(*Again, First) << "freed blocks are reused";
}

TEST(MemoryPool, BlocksNeverStraddleSlabs) {
  FakeServer S;
  DeviceMemoryPool P = S.pool();
  for (int K = 0; K < 200; ++K) {
    auto A = P.allocate(60000);
    ASSERT_TRUE(A);
    bool Inside = false;
    for (auto &[Slab, Size] : S.Live)
      Inside |= *A >= Slab && *A + 60000 <= Slab + Size;
    EXPECT_TRUE(Inside) << K;
  }
}

// The plugin asks the server for device bytes it only predicts a region
// will retrieve; it asks only for ranges holds() vouches for, as the
// server refuses a request that reads outside its allocations.
TEST(MemoryPool, HoldsOnlyRangesTheServerGaveIt) {
  FakeServer S;
  DeviceMemoryPool P = S.pool();
  EXPECT_FALSE(P.holds(1 << 20, 8)) << "nothing allocated yet";
  auto Small = P.allocate(8);
  ASSERT_TRUE(Small);
  uint64_t Slab = S.Live.begin()->first;
  EXPECT_TRUE(P.holds(*Small, 8));
  EXPECT_TRUE(P.holds(Slab, DeviceMemoryPool::kSlabSize)) << "the whole slab";
  EXPECT_FALSE(P.holds(Slab - 8, 16)) << "starts before the slab";
  EXPECT_FALSE(P.holds(Slab + DeviceMemoryPool::kSlabSize - 8, 16))
      << "ends beyond it";
  EXPECT_FALSE(P.holds(Slab + 8, ~0ull - 4)) << "a size that wraps";
  auto Large = P.allocate(1 << 20);
  ASSERT_TRUE(Large);
  EXPECT_TRUE(P.holds(*Large, 1 << 20));
  EXPECT_FALSE(P.holds(*Large, (1 << 20) + (64 << 10))) << "past its end";
  ASSERT_TRUE(P.release(*Large).ok());
  EXPECT_FALSE(P.holds(*Large, 8)) << "a freed large block (cached)";
}

TEST(MemoryPool, LargeBlocksAreCachedAndDoubleFreesCaught) {
  FakeServer S;
  DeviceMemoryPool P = S.pool();
  auto A = P.allocate(10 << 20);
  ASSERT_TRUE(A);
  uint64_t Calls = P.serverCalls();
  ASSERT_TRUE(P.release(*A).ok());
  EXPECT_FALSE(P.release(*A).ok()) << "double free";
  auto B = P.allocate((10 << 20) - 100);
  ASSERT_TRUE(B);
  EXPECT_EQ(*B, *A) << "same rounded size: the cached block is reused";
  EXPECT_EQ(P.serverCalls(), Calls);
  EXPECT_FALSE(P.release(12345).ok()) << "unknown pointers go to the server";
}

// The first block carved from a slab starts where the slab does: a second
// free of it must not reach the server, which would free the whole slab
// and every live block in it.
TEST(MemoryPool, SmallDoubleFreesStayInThePool) {
  FakeServer S;
  DeviceMemoryPool P = S.pool();
  auto First = P.allocate(1024), Keep = P.allocate(64);
  ASSERT_TRUE(First && Keep);
  ASSERT_EQ(*First, S.Live.begin()->first) << "the slab's first block";
  ASSERT_TRUE(P.release(*First).ok());
  uint64_t Calls = P.serverCalls();
  Status Again = P.release(*First);
  EXPECT_FALSE(Again.ok());
  EXPECT_NE(Again.message().find("was already freed"), std::string::npos)
      << Again.message();
  Status Inside = P.release(*Keep + 8);
  EXPECT_NE(Inside.message().find("is not a block that was allocated"),
            std::string::npos)
      << Inside.message();
  EXPECT_EQ(P.serverCalls(), Calls) << "neither reached the server";
  EXPECT_EQ(S.Live.size(), 1u) << "the slab is still allocated";
  EXPECT_TRUE(P.holds(*Keep, 64));
  EXPECT_TRUE(P.release(*Keep).ok());
}

TEST(MemoryPool, CacheIsGivenBackWhenTheServerIsFull) {
  FakeServer S;
  S.Limit = 24 << 20;
  DeviceMemoryPool P = S.pool();
  auto A = P.allocate(16 << 20);
  ASSERT_TRUE(A);
  ASSERT_TRUE(P.release(*A).ok()); // cached: still held on the server
  auto B = P.allocate(20 << 20);   // does not fit beside the cached block
  ASSERT_TRUE(B) << B.status().message();
  EXPECT_EQ(S.Live.size(), 1u);
}

TEST(BlockTable, AgreesWithAMapUnderRandomUse) {
  // Many blocks in few 64-byte-aligned neighbourhoods: long probe runs,
  // deletions in their middle, and growth.
  BlockTable T;
  std::unordered_map<uint64_t, uint8_t> Ref;
  std::mt19937_64 Rng(42);
  for (int Step = 0; Step < 200000; ++Step) {
    uint64_t Addr = (0x7f0000000000ull + (Rng() % 4096) * 64);
    switch (Rng() % 3) {
    case 0: {
      uint8_t Class = static_cast<uint8_t>(Rng() % 11);
      T.insert(Addr, Class);
      Ref[Addr] = Class;
      break;
    }
    case 1:
      T.erase(Addr);
      Ref.erase(Addr);
      break;
    default: {
      auto It = Ref.find(Addr);
      ASSERT_EQ(T.find(Addr), It == Ref.end() ? -1 : It->second) << Step;
    }
    }
    ASSERT_EQ(T.size(), Ref.size());
  }
  for (auto &[Addr, Class] : Ref)
    EXPECT_EQ(T.find(Addr), Class);
}

TEST(MemoryPool, SmallBlocksFitWhereASlabDoesNot) {
  FakeServer S;
  S.Limit = DeviceMemoryPool::kSlabSize / 4;
  DeviceMemoryPool P = S.pool();
  auto A = P.allocate(1);
  ASSERT_TRUE(A) << A.status().message();
  EXPECT_EQ(S.InUse, 64u) << "the block alone, not a slab";
  EXPECT_TRUE(P.holds(*A, 64));
  ASSERT_TRUE(P.release(*A).ok());
  EXPECT_EQ(S.InUse, 0u) << "given back to the server, not cached";
  // A large block cached by the pool makes room for a slab again.
  S.Limit = DeviceMemoryPool::kSlabSize;
  auto Big = P.allocate(DeviceMemoryPool::kSlabSize / 2);
  ASSERT_TRUE(Big);
  ASSERT_TRUE(P.release(*Big).ok());
  auto B = P.allocate(100);
  ASSERT_TRUE(B);
  EXPECT_EQ(S.InUse, DeviceMemoryPool::kSlabSize);
}

TEST(MemoryPool, EmptySlabsGoBackWhenTheServerIsFull) {
  FakeServer S;
  const uint64_t Slab = DeviceMemoryPool::kSlabSize;
  S.Limit = 3 * Slab;
  DeviceMemoryPool P = S.pool();
  // Three slabs of 4 KiB blocks (and 64-byte ones in the same slabs).
  std::vector<uint64_t> Blocks;
  for (uint64_t K = 0; K < 3 * Slab / 4096; ++K) {
    auto A = P.allocate(K % 7 ? 4096 : 64);
    ASSERT_TRUE(A) << K << ": " << A.status().message();
    Blocks.push_back(*A);
  }
  ASSERT_EQ(S.Live.size(), 3u);
  uint64_t Kept = Blocks[Blocks.size() / 2]; // keeps its slab in use
  for (uint64_t B : Blocks)
    if (B != Kept)
      ASSERT_TRUE(P.release(B).ok());
  // The server is full of slabs whose blocks are free: the empty ones go.
  auto Big = P.allocate(2 * Slab);
  ASSERT_TRUE(Big) << Big.status().message();
  EXPECT_EQ(S.Live.size(), 2u) << "the slab with a live block and the big one";
  EXPECT_TRUE(P.holds(Kept, 64));
  // Blocks of the slabs that went are no longer handed out.
  for (int K = 0; K < 200; ++K) {
    auto A = P.allocate(4096);
    ASSERT_TRUE(A) << A.status().message();
    EXPECT_TRUE(P.holds(*A, 4096)) << "in a slab the server still has";
  }
  // Nothing to give back: a real shortage is still an error.
  EXPECT_FALSE(P.allocate(2 * Slab));
}
