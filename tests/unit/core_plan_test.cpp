//===- core_plan_test.cpp - The cores of emulated DPUs and the program ----===//
#include "tools/core_plan.h"

#include <gtest/gtest.h>

using namespace ompdpu::tools;
using Cores = std::vector<int>;

TEST(CorePlan, EvenShareFromTheTop) {
  CorePlan P = planCores({0, 1, 2, 3, 4, 5, 6, 7}, 2, 0);
  EXPECT_TRUE(P.Fits);
  EXPECT_EQ(P.DpuCores, (std::vector<Cores>{{6, 7}, {4, 5}}));
  EXPECT_EQ(P.HostCores, (Cores{0, 1, 2, 3}));
  EXPECT_TRUE(sharingOptions(P, 0).empty());
}

TEST(CorePlan, CoresPerDpuAsAsked) {
  CorePlan P = planCores({0, 1, 2, 3}, 1, 3);
  EXPECT_EQ(P.DpuCores, (std::vector<Cores>{{1, 2, 3}}));
  EXPECT_EQ(P.HostCores, (Cores{0}));
}

TEST(CorePlan, TwoCoresOneDpu) {
  CorePlan P = planCores({0, 1}, 1, 0);
  EXPECT_TRUE(P.Fits);
  EXPECT_EQ(P.DpuCores, (std::vector<Cores>{{1}}));
  EXPECT_EQ(P.HostCores, (Cores{0}));
}

TEST(CorePlan, TooFewCoresDpusShareTheTopHalf) {
  CorePlan P = planCores({0, 1}, 2, 0);
  EXPECT_FALSE(P.Fits);
  EXPECT_EQ(P.DpuCores, (std::vector<Cores>{{1}, {1}}));
  EXPECT_EQ(P.HostCores, (Cores{0}));
  // They share with each other, not with the program.
  EXPECT_EQ(sharingOptions(P, 0), (std::vector<std::string>{"--shared-cores"}));
}

TEST(CorePlan, OneCoreEverybodySharesIt) {
  CorePlan P = planCores({3}, 2, 0);
  EXPECT_FALSE(P.Fits);
  EXPECT_EQ(P.DpuCores, (std::vector<Cores>{{3}, {3}}));
  EXPECT_EQ(P.HostCores, (Cores{3}));
  EXPECT_EQ(sharingOptions(P, 1),
            (std::vector<std::string>{"--shared-cores", "--spin-us", "20"}));
}

TEST(CorePlan, UnpinnedSharesWithTheProgram) {
  CorePlan P = unpinnedPlan({0, 1}, 2);
  EXPECT_EQ(P.DpuCores, (std::vector<Cores>{{}, {}}));
  EXPECT_EQ(sharingOptions(P, 0),
            (std::vector<std::string>{"--shared-cores", "--spin-us", "20"}));
}

TEST(CorePlan, UnsortedCoresAreSorted) {
  CorePlan P = planCores({5, 2, 9}, 1, 1);
  EXPECT_EQ(P.DpuCores, (std::vector<Cores>{{9}}));
  EXPECT_EQ(P.HostCores, (Cores{2, 5}));
  EXPECT_EQ(joinCores(P.HostCores), "2,5");
}
