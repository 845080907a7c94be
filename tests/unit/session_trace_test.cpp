// What a session keeps for the client's timeline: each request from its
// arrival to its answer, paired by sender and id, and no heartbeats (the
// client's timeline has no request to pair them with).
#include "server/session_trace.h"

#include <gtest/gtest.h>

using ompdpu::protocol::Header;
using ompdpu::protocol::kHeartbeatId;
using ompdpu::protocol::MsgType;
using ompdpu::protocol::TraceEvent;
using ompdpu::server::SessionTrace;

namespace {
Header header(MsgType Type, uint32_t Id) {
  Header H;
  H.Type = Type;
  H.RequestId = Id;
  return H;
}

TEST(SessionTrace, KeepsEachRequestFromArrivalToAnswer) {
  SessionTrace T;
  int A = 0, B = 0;
  T.start();
  T.arrived(header(MsgType::Run, 7), &A, 100);
  T.arrived(header(MsgType::Run, 7), &B, 5);
  T.answered(header(MsgType::Run, 7), &A, 20);
  auto R = T.collect();
  ASSERT_EQ(R.Events.size(), 1u) << "B's request 7 is still unanswered";
  EXPECT_EQ(R.Events[0].What, TraceEvent::Request);
  EXPECT_EQ(R.Events[0].RequestId, 7u);
  EXPECT_EQ(R.Events[0].Bytes, 120u);
  EXPECT_FALSE(T.on());
}

TEST(SessionTrace, LeavesHeartbeatsOut) {
  SessionTrace T;
  int A = 0;
  T.start();
  T.arrived(header(MsgType::Ping, kHeartbeatId), &A, 0);
  T.answered(header(MsgType::Ping, kHeartbeatId), &A, 0);
  T.arrived(header(MsgType::Ping, 3), &A, 0);
  T.answered(header(MsgType::Ping, 3), &A, 0);
  auto R = T.collect();
  ASSERT_EQ(R.Events.size(), 1u);
  EXPECT_EQ(R.Events[0].RequestId, 3u) << "a Ping that was issued is kept";
}

TEST(SessionTrace, KeepsNothingWhenOff) {
  SessionTrace T;
  int A = 0;
  T.arrived(header(MsgType::Run, 1), &A, 0);
  T.answered(header(MsgType::Run, 1), &A, 0);
  T.kernel("k", 0);
  T.start();
  EXPECT_TRUE(T.collect().Events.empty());
}
} // namespace
