//===- session_user.cpp - The account a session runs as -------------------===//
#include "server/session_user.h"

#include "common/log.h"

#include <grp.h>
#include <pwd.h>
#include <sys/resource.h>
#include <unistd.h>

#ifndef __has_feature
#define __has_feature(X) 0
#endif

namespace ompdpu::server {
namespace {

/// ASan's and TSan's shadow memory reserves terabytes of address space at
/// start: their builds cannot run under RLIMIT_AS.
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kCanLimitAddressSpace = false;
#else
constexpr bool kCanLimitAddressSpace = true;
#endif

Expected<SessionUser> account(struct passwd *Pw) {
  SessionUser U;
  U.Switch = true;
  U.Uid = Pw->pw_uid;
  U.Gid = Pw->pw_gid;
  U.Name = Pw->pw_name;
  int N = 32;
  U.Groups.resize(N);
  while (getgrouplist(Pw->pw_name, Pw->pw_gid, U.Groups.data(), &N) < 0)
    U.Groups.resize(N);
  U.Groups.resize(N);
  return U;
}

bool limit(int Resource, uint64_t Value) {
  if (Value == 0)
    return true;
  struct rlimit R;
  R.rlim_cur = R.rlim_max = Value;
  return setrlimit(Resource, &R) == 0;
}

} // namespace

Expected<SessionUser> sessionUserFor(const Identity &Id,
                                     const std::string &RootUser,
                                     bool RootSessions) {
  if (geteuid() != 0) {
    SessionUser Self; // the server's own account, checked by authentication
    Self.Uid = geteuid();
    Self.Gid = getegid();
    return Self;
  }
  if (Id.Uid == 0) {
    if (RootSessions) {
      SessionUser Root;
      Root.Name = "root";
      return Root;
    }
    struct passwd *Pw = getpwnam(RootUser.c_str());
    if (!Pw)
      return Status::error(
          ErrorCode::Auth,
          format("clients authenticated as root run as account '%s', which "
                 "does not exist here: on a server root started for its own "
                 "programs, restart it with --root-sessions (root's sessions "
                 "then run as root); on a shared one, create the account "
                 "(adduser --system %s) or name another with --root-user",
                 RootUser.c_str(), RootUser.c_str()));
    if (Pw->pw_uid == 0)
      return Status::error(ErrorCode::Auth,
                           format("--root-user %s is root: sessions never run "
                                  "as root",
                                  RootUser.c_str()));
    return account(Pw);
  }
  if (struct passwd *Pw = getpwuid(Id.Uid))
    return account(Pw);
  // A MUNGE user without an account here: its ids, no supplementary groups.
  SessionUser U;
  U.Switch = true;
  U.Uid = Id.Uid;
  U.Gid = Id.Gid;
  U.Name = std::to_string(Id.Uid);
  return U;
}

const char *enterSessionAccount(const SessionUser &U, const SessionLimits &L) {
  struct rlimit NoCore = {0, 0};
  if (setrlimit(RLIMIT_CORE, &NoCore) != 0)
    return "setrlimit(RLIMIT_CORE)";
  if (kCanLimitAddressSpace && !limit(RLIMIT_AS, L.AddressSpace))
    return "setrlimit(RLIMIT_AS)";
  if (!limit(RLIMIT_NOFILE, L.OpenFiles))
    return "setrlimit(RLIMIT_NOFILE)";
  if (!limit(RLIMIT_NPROC, L.Processes))
    return "setrlimit(RLIMIT_NPROC)";
  if (!U.Switch)
    return nullptr;
  if (setgroups(U.Groups.size(), U.Groups.data()) != 0)
    return "setgroups";
  if (setresgid(U.Gid, U.Gid, U.Gid) != 0)
    return "setresgid";
  if (setresuid(U.Uid, U.Uid, U.Uid) != 0)
    return "setresuid";
  // No way back: a kernel that tried to regain root must fail.
  if (U.Uid != 0 && (setuid(0) == 0 || seteuid(0) == 0))
    return "dropping root for good";
  return nullptr;
}

} // namespace ompdpu::server
