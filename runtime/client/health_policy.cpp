//===- health_policy.cpp - When a silent server counts as gone ------------===//
#include "client/health_policy.h"

#include "common/log.h"

namespace ompdpu::client {

Status connectionLost(const Status &Why) {
  return Status::error(
      ErrorCode::PeerLost,
      format("connection lost: the server stopped answering (%s): it died, "
             "was stopped or its DPU went away; see the server's log "
             "(journalctl -u ompdpu-server for the service) and `ompdpu info`",
             Why.message().c_str()));
}

HealthPolicy::Decision
HealthPolicy::check(Clock::time_point Now, bool Awaiting,
                    std::optional<Clock::time_point> OldestKernel) {
  if (Lost) {
    // Prefer the supervisor's explanation (signal, kernel) when it comes.
    if (seconds(Now - LostAt) > L.SessionLostGrace)
      return {Action::Fail, connectionLost(LostReason)};
    return {};
  }
  if (Heard != HeardSeen) {
    HeardSeen = Heard;
    LastHeard = Now;
  }
  if (!Awaiting)
    return {};
  double Silent = seconds(Now - LastHeard);
  if (L.ResponseTimeout > 0 && Silent > L.ResponseTimeout)
    return {Action::Fail,
            Status::error(format(
                "server not responding for %.1f s (OMPDPU_TIMEOUT)", Silent))};
  if (L.KernelTimeout > 0 && OldestKernel &&
      seconds(Now - *OldestKernel) > L.KernelTimeout)
    return {Action::Fail,
            Status::error(format(
                "kernel did not finish within %.1f s (OMPDPU_KERNEL_TIMEOUT)",
                L.KernelTimeout))};
  if (Silent > L.HeartbeatInterval &&
      seconds(Now - LastPing) > L.HeartbeatInterval) {
    LastPing = Now;
    return {Action::Ping, Status()};
  }
  return {};
}

} // namespace ompdpu::client
