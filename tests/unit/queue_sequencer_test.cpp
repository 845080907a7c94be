// A client queue's operations start one at a time in sequence order,
// whatever order they arrive in; Landed waiters are answered once their
// operation's bytes are in place. Without a session or a transport.
#include "server/queue_sequencer.h"

#include <gtest/gtest.h>
#include <string>

using ompdpu::server::QueueSequencer;

namespace {
using Seq = QueueSequencer<std::string, int>;

TEST(QueueSequencer, OperationsStartInOrderWhateverTheArrival) {
  Seq S;
  std::vector<int> Ready;
  std::string Two = "op2", One = "op1", Zero = "op0";
  EXPECT_EQ(S.admit(5, 2, Two), Seq::Admit::Parked);
  EXPECT_EQ(S.admit(5, 1, One), Seq::Admit::Parked);
  EXPECT_FALSE(S.inTurnAlone(5, 0)) << "others are parked";
  EXPECT_EQ(S.admit(5, 0, Zero), Seq::Admit::Start);
  EXPECT_EQ(Zero, "op0") << "a request that starts is not taken";
  auto Next = S.stepDone(5, Ready);
  ASSERT_TRUE(Next);
  EXPECT_EQ(*Next, "op1");
  Next = S.stepDone(5, Ready);
  ASSERT_TRUE(Next);
  EXPECT_EQ(*Next, "op2");
  EXPECT_FALSE(S.stepDone(5, Ready));
  EXPECT_TRUE(S.inTurnAlone(5, 3));
  EXPECT_TRUE(Ready.empty());
}

TEST(QueueSequencer, OneAtATimeAndNoNumberTwice) {
  Seq S;
  std::string A = "a", B = "b", Again = "again";
  EXPECT_EQ(S.admit(1, 0, A), Seq::Admit::Start);
  EXPECT_FALSE(S.inTurnAlone(1, 1)) << "the queue is busy";
  EXPECT_EQ(S.admit(1, 1, B), Seq::Admit::Parked);
  EXPECT_EQ(S.admit(1, 1, Again), Seq::Admit::Duplicate);
  EXPECT_EQ(S.admit(1, 0, Again), Seq::Admit::Duplicate);
  std::vector<int> Ready;
  ASSERT_TRUE(S.stepDone(1, Ready));
  EXPECT_EQ(S.admit(1, 0, Again), Seq::Admit::Duplicate) << "already done";
}

TEST(QueueSequencer, QueuesAreIndependent) {
  Seq S;
  std::string A = "a", B = "b";
  EXPECT_EQ(S.admit(1, 0, A), Seq::Admit::Start);
  EXPECT_EQ(S.admit(2, 0, B), Seq::Admit::Start);
  EXPECT_TRUE(S.inTurnAlone(3, 0));
}

TEST(QueueSequencer, LandedWaitersAreAnsweredWhenTheirBytesAreIn) {
  Seq S;
  std::vector<int> Ready;
  std::string Op = "op";
  EXPECT_EQ(S.admit(4, 0, Op), Seq::Admit::Start);
  EXPECT_TRUE(S.waitLanded(4, 0, 10));
  EXPECT_TRUE(S.waitLanded(4, 1, 11));
  // A Batch's bytes are in place before its kernel ends.
  S.landed(4, 1, Ready);
  EXPECT_EQ(Ready, std::vector<int>{10});
  Ready.clear();
  EXPECT_FALSE(S.waitLanded(4, 0, 12)) << "landed already: answer now";
  S.stepDone(4, Ready);
  EXPECT_TRUE(Ready.empty()) << "operation 1 has not run";
  std::string Next = "op1";
  EXPECT_EQ(S.admit(4, 1, Next), Seq::Admit::Start);
  S.stepDone(4, Ready);
  EXPECT_EQ(Ready, std::vector<int>{11});
}
} // namespace
