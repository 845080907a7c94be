// The client's health policy against a fake clock: when silence sends a
// ping, when it fails the connection, and how long a lost session waits
// for the supervisor's explanation.
#include "client/health_policy.h"

#include <gtest/gtest.h>

using ompdpu::ErrorCode;
using ompdpu::Status;
using ompdpu::client::HealthPolicy;
using Action = HealthPolicy::Action;

namespace {
using namespace std::chrono_literals;
const HealthPolicy::Clock::time_point T0{};

HealthPolicy policy(double Response = 10, double Kernel = 0) {
  return HealthPolicy({Response, Kernel, 0.5, 0.5}, T0);
}

TEST(HealthPolicy, SilenceSendsPingsThenFails) {
  HealthPolicy H = policy();
  EXPECT_EQ(H.check(T0 + 400ms, true).What, Action::None);
  EXPECT_EQ(H.check(T0 + 600ms, true).What, Action::Ping);
  EXPECT_EQ(H.check(T0 + 700ms, true).What, Action::None) << "one per interval";
  EXPECT_EQ(H.check(T0 + 1200ms, true).What, Action::Ping);
  auto D = H.check(T0 + 10500ms, true);
  ASSERT_EQ(D.What, Action::Fail);
  EXPECT_EQ(D.Why.message(),
            "server not responding for 10.5 s (OMPDPU_TIMEOUT)");
}

TEST(HealthPolicy, WhatArrivesResetsTheSilence) {
  HealthPolicy H = policy();
  EXPECT_EQ(H.check(T0 + 9s, true).What, Action::Ping);
  H.heard();
  EXPECT_EQ(H.check(T0 + 9100ms, true).What, Action::None);
  EXPECT_EQ(H.check(T0 + 18s, true).What, Action::Ping) << "8.9 s: not yet";
  EXPECT_EQ(H.check(T0 + 19200ms, true).What, Action::Fail);
}

TEST(HealthPolicy, NothingAwaitedNothingChecked) {
  HealthPolicy H = policy();
  EXPECT_EQ(H.check(T0 + 1h, false).What, Action::None);
  // A wait begins with heard(): the silence counts from the first check
  // that notices it, not from the last reply an hour ago.
  H.heard();
  EXPECT_EQ(H.check(T0 + 1h + 1s, true).What, Action::None);
  EXPECT_EQ(H.check(T0 + 1h + 1600ms, true).What, Action::Ping);
}

TEST(HealthPolicy, ZeroResponseTimeoutNeverFails) {
  HealthPolicy H = policy(0);
  for (int K = 1; K < 100; ++K)
    EXPECT_NE(H.check(T0 + K * 1s, true).What, Action::Fail);
}

TEST(HealthPolicy, AKernelPastItsLimitFails) {
  HealthPolicy H = policy(10, 2);
  H.heard();
  EXPECT_EQ(H.check(T0 + 100ms, true, T0).What, Action::None);
  H.heard(); // the server answers pings: not silent
  auto D = H.check(T0 + 2500ms, true, T0);
  ASSERT_EQ(D.What, Action::Fail);
  EXPECT_EQ(D.Why.message(),
            "kernel did not finish within 2.0 s (OMPDPU_KERNEL_TIMEOUT)");
}

TEST(HealthPolicy, ALostSessionWaitsForTheSupervisorsWord) {
  HealthPolicy H = policy();
  H.sessionLost(Status::error("Endpoint timeout"), T0 + 1s);
  H.sessionLost(Status::error("later report"), T0 + 1100ms);
  EXPECT_TRUE(H.sessionLost());
  EXPECT_EQ(H.check(T0 + 1400ms, true).What, Action::None);
  auto D = H.check(T0 + 1600ms, true);
  ASSERT_EQ(D.What, Action::Fail);
  EXPECT_EQ(D.Why.code(), ErrorCode::PeerLost);
  // What happened, then what to look at.
  EXPECT_EQ(D.Why.message(),
            "connection lost: the server stopped answering (Endpoint "
            "timeout): it died, was stopped or its DPU went away; see the "
            "server's log (journalctl -u ompdpu-server for the service) and "
            "`ompdpu info`");
}
} // namespace
