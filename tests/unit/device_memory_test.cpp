// A session's device memory: the limit, frees of what was not allocated,
// and transfers checked against live allocations, without a client.
#include "server/device_memory.h"

#include <gtest/gtest.h>

using ompdpu::ErrorCode;
using ompdpu::server::DeviceMemory;

namespace {

TEST(DeviceMemory, AllocationsAreCheckedAndFreed) {
  DeviceMemory M(4 << 20);
  auto Small = M.allocate(100);
  auto Large = M.allocate(DeviceMemory::kMmapThreshold);
  ASSERT_TRUE(Small && Large);
  EXPECT_EQ(*Small % 64, 0u);
  EXPECT_EQ(*Large % (2 << 20), 0u) << "large blocks are huge-page aligned";
  EXPECT_TRUE(M.check(*Small, 100).ok());
  EXPECT_FALSE(M.check(*Small, 101).ok());
  EXPECT_FALSE(M.check(*Small - 1, 2).ok());
  EXPECT_EQ(M.bytesInUse(), 100 + DeviceMemory::kMmapThreshold);
  EXPECT_TRUE(M.release(*Large).ok());
  EXPECT_FALSE(M.check(*Large, 1).ok());
  EXPECT_EQ(M.bytesInUse(), 100u);
}

TEST(DeviceMemory, TheLimitHolds) {
  DeviceMemory M(1000);
  auto A = M.allocate(600);
  ASSERT_TRUE(A);
  auto B = M.allocate(600);
  ASSERT_FALSE(B);
  EXPECT_EQ(B.status().code(), ErrorCode::NoMemory);
  EXPECT_NE(B.status().message().find("600 of 1000 in use"), std::string::npos)
      << B.status().message();
  EXPECT_FALSE(M.allocate(~0ull));
  EXPECT_TRUE(M.release(*A).ok());
  EXPECT_TRUE(M.allocate(600));
}

TEST(DeviceMemory, OnlyItsOwnAllocationsAreFreed) {
  DeviceMemory M(1 << 20);
  auto A = M.allocate(64);
  ASSERT_TRUE(A);
  EXPECT_EQ(M.release(*A + 8).code(), ErrorCode::NotFound);
  static char Global[32];
  uint64_t G = reinterpret_cast<uint64_t>(Global);
  ASSERT_TRUE(M.adopt(G, sizeof Global).ok());
  EXPECT_TRUE(M.check(G, sizeof Global).ok());
  EXPECT_EQ(M.release(G).code(), ErrorCode::NotFound)
      << "an image's global is not the client's to free";
  EXPECT_TRUE(M.release(*A).ok());
  EXPECT_EQ(M.release(*A).code(), ErrorCode::NotFound) << "double free";
}

TEST(DeviceMemory, ZeroBytesIsOneByte) {
  DeviceMemory M(1 << 20);
  auto A = M.allocate(0);
  ASSERT_TRUE(A);
  EXPECT_TRUE(M.check(*A, 1).ok());
  EXPECT_EQ(M.bytesInUse(), 1u);
}

} // namespace
