//===- session_leftovers.h - What sessions leave in /dev/shm ---*- C++ -*-===//
#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

namespace ompdpu::server {

/// libomp registers every process that loads it in a POSIX shared-memory
/// object named after its pid and uid, and removes it only when it shuts
/// down. Sessions end with _exit() or SIGKILL, so their supervisor removes
/// it once the session is reaped (before its pid can be reused).
void removeLibompRegistration(pid_t Pid, uid_t Uid);

/// Remove the UCX shared memory files a session named when it started (a
/// session killed before its worker closed leaves them, with their memory):
/// each only if it is one (transport/shm_files.h), a regular file, and owned
/// by the session's account.
/// Returns how many it removed.
size_t removeSharedMemoryFiles(const std::vector<std::string> &Files,
                               uid_t Uid);

} // namespace ompdpu::server
