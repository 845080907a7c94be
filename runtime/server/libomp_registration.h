//===- libomp_registration.h - What libomp leaves of a session -*- C++ -*-===//
#pragma once

#include <sys/types.h>

namespace ompdpu::server {

/// libomp registers every process that loads it in a POSIX shared-memory
/// object named after its pid and uid, and removes it only when it shuts
/// down. Sessions end with _exit() or SIGKILL, so their supervisor removes
/// it once the session is reaped (before its pid can be reused).
void removeLibompRegistration(pid_t Pid, uid_t Uid);

} // namespace ompdpu::server
