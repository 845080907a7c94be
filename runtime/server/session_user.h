//===- session_user.h - The account a session runs as ------------*- C++
//-*-===//
//
// Started as root, the server runs each session as the user its client
// proved to be, never as root: a client authenticated as root gets an
// unprivileged account the administrator names (--root-user). Started as a
// user, it serves that user only and sessions keep its account.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/status.h"
#include "server/authenticator.h"

#include <cstdint>
#include <string>
#include <sys/types.h>
#include <vector>

namespace ompdpu::server {

struct SessionUser {
  bool Switch = false; ///< the session changes to this account before exec
  uid_t Uid = 0;
  gid_t Gid = 0;
  std::vector<gid_t> Groups; ///< supplementary groups
  std::string Name;
};

/// Resource limits of a session process (0: leave as inherited).
struct SessionLimits {
  uint64_t AddressSpace = 0; ///< RLIMIT_AS
  uint64_t OpenFiles = 0;    ///< RLIMIT_NOFILE
  uint64_t Processes = 0;    ///< RLIMIT_NPROC (the user's, threads included)
};

/// The account the session of a client with this identity runs as.
/// RootUser: the account for clients authenticated as root; RootSessions:
/// keep root for them instead (a private emulated DPU of root's only).
Expected<SessionUser> sessionUserFor(const Identity &Id,
                                     const std::string &RootUser,
                                     bool RootSessions);

/// In the forked child, before exec: take the limits, then become the user
/// (for good: no way back to root). Only system calls, safe after fork.
/// Returns the failing step's name, or null.
const char *enterSessionAccount(const SessionUser &U, const SessionLimits &L);

} // namespace ompdpu::server
