//===- session_launcher.h - Start a client's session process ----*- C++ -*-===//
//
// A session is a fresh exec of the server (no UCX state of the supervisor
// survives), given its terms over its channel (session_channel.h) and an
// output area shared with the supervisor, and ready once it sends its
// worker's address.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/status.h"
#include "protocol/session_channel.h"
#include "server/session_user.h"

#include <cstdint>
#include <sys/types.h>
#include <vector>

namespace ompdpu::server {

/// A session process that has started.
struct LaunchedSession {
  pid_t Pid = -1;
  int ChannelFd = -1; ///< the supervisor's end of the session channel
  int OutputFd = -1;  ///< the output area (output_ring.h)
  /// The read end of the session's stderr (non-blocking): its messages,
  /// which the supervisor logs as the session's (a kernel can write there).
  int LogFd = -1;
  std::vector<uint8_t> Address;      ///< the session worker's packed address
  std::vector<std::string> ShmFiles; ///< its shared memory files (unchecked)
};

/// Start SelfExe as a session with Terms (OutputFd is filled in), as
/// account User under Limits; the session has 10 s to become ready. On
/// failure nothing is left running or open.
Expected<LaunchedSession> launchSession(const char *SelfExe,
                                        protocol::SessionSetup Terms,
                                        const SessionUser &User,
                                        const SessionLimits &Limits);

/// SIGKILL a session process and every process of its group: a session
/// leads its own, which its kernels cannot leave (setsid and setpgid are
/// refused), so the processes they started go too.
void killSessionGroup(pid_t Pid);

/// Wait (at most 10 s) for the SessionReady of a session starting on
/// ChannelFd.
Expected<protocol::SessionReady> awaitSessionReady(int ChannelFd);

} // namespace ompdpu::server
