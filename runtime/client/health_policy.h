//===- health_policy.h - When a silent server counts as gone -----*- C++
//-*-===//
//
// UCX reports a dead peer but never a frozen one, so the client keeps its
// own clock: silence while replies are awaited past the response timeout,
// or a kernel past its own limit, fails the connection; silence past the
// heartbeat interval sends a ping (which the supervisor answers even while
// a kernel keeps the session busy). A lost session endpoint waits briefly
// for the supervisor's explanation. Time comes in as an argument, so the
// policy is tested with a fake clock.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/status.h"

#include <chrono>
#include <cstdint>
#include <optional>

namespace ompdpu::client {

/// A lost connection as the user reads it: what happened (the server stopped
/// answering: Why, as UCX put it) and what to look at.
Status connectionLost(const Status &Why);

class HealthPolicy {
public:
  using Clock = std::chrono::steady_clock;
  struct Limits {
    double ResponseTimeout = 10; ///< seconds of silence; 0: none
    double KernelTimeout = 0;    ///< seconds a kernel may run; 0: none
    double HeartbeatInterval = 0.5;
    /// For the supervisor to say why, once the session's endpoint failed
    /// (a slow DPU may need seconds to reap the session and send its rest).
    double SessionLostGrace = 0.5;
  };
  enum class Action { None, Ping, Fail };
  struct Decision {
    Action What = Action::None;
    Status Why; ///< for Fail
  };

  HealthPolicy(const Limits &L, Clock::time_point Now)
      : L(L), LastHeard(Now), LastPing(Now) {}

  /// Something arrived, or a wait began (cheap: no clock read).
  void heard() { ++Heard; }
  /// The session's endpoint failed (the first report counts).
  void sessionLost(const Status &Why, Clock::time_point Now) {
    if (Lost)
      return;
    Lost = true;
    LostReason = Why;
    LostAt = Now;
  }
  bool sessionLost() const { return Lost; }
  /// What to do now. Awaiting: replies are awaited from a session;
  /// OldestKernel: when the longest-running kernel awaited was issued.
  Decision check(Clock::time_point Now, bool Awaiting,
                 std::optional<Clock::time_point> OldestKernel = std::nullopt);

private:
  static double seconds(Clock::duration D) {
    return std::chrono::duration<double>(D).count();
  }
  Limits L;
  uint64_t Heard = 0, HeardSeen = 0;
  Clock::time_point LastHeard, LastPing, LostAt;
  bool Lost = false;
  Status LostReason;
};

} // namespace ompdpu::client
