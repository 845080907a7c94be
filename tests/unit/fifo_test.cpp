// The session's request and kernel queues.
#include "common/fifo.h"

#include <gtest/gtest.h>

#include <memory>

using ompdpu::Fifo;

TEST(Fifo, KeepsOrderAcrossDrains) {
  Fifo<std::unique_ptr<int>> Q;
  EXPECT_TRUE(Q.empty());
  for (int Round = 0; Round < 3; ++Round) {
    for (int K = 0; K < 5; ++K)
      Q.push(std::make_unique<int>(K));
    EXPECT_EQ(Q.size(), 5u);
    EXPECT_EQ(*Q.front(), 0);
    for (int K = 0; K < 5; ++K)
      EXPECT_EQ(*Q.pop(), K);
    EXPECT_TRUE(Q.empty());
  }
}

TEST(Fifo, NeverDrainedDoesNotGrow) {
  // One element always waits: the consumed prefix must still be reclaimed.
  Fifo<int> Q;
  Q.push(0);
  for (int K = 1; K < 100000; ++K) {
    Q.push(int(K));
    ASSERT_EQ(Q.pop(), K - 1);
    ASSERT_EQ(Q.size(), 1u);
    ASSERT_LE(Q.storedElements(), 130u) << "after " << K << " pushes";
  }
}
