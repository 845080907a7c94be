//===- confinement.cpp - What a session's kernels may not do --------------===//
#include "server/confinement.h"

#include "common/log.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <linux/sockios.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace ompdpu::server {

Status protectFromPeers() {
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
    return Status::error(
        format("prctl(PR_SET_DUMPABLE): %s", std::strerror(errno)));
  rlimit NoCore{0, 0};
  if (setrlimit(RLIMIT_CORE, &NoCore) != 0)
    return Status::error(
        format("setrlimit(RLIMIT_CORE): %s", std::strerror(errno)));
  return Status();
}

namespace {
/// Give up every capability for good: a session of a server started as
/// root keeps uid 0 (its client's shared memory and cma need it) but not
/// root's powers, so that the peers' non-dumpable state binds it too.
Status dropCapabilities() {
  // Exec must not give them back, nor a uid change keep them.
  if (prctl(PR_GET_SECUREBITS) !=
          (SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
           SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED) &&
      prctl(PR_SET_SECUREBITS,
            SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED) != 0 &&
      errno != EPERM) // an unprivileged server has nothing to lock
    return Status::error(
        format("prctl(PR_SET_SECUREBITS): %s", std::strerror(errno)));
  for (int Cap = 0; prctl(PR_CAPBSET_READ, Cap) >= 0; ++Cap)
    if (prctl(PR_CAPBSET_DROP, Cap) != 0 && errno != EPERM)
      return Status::error(
          format("prctl(PR_CAPBSET_DROP, %d): %s", Cap, std::strerror(errno)));
  __user_cap_header_struct Header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct None[_LINUX_CAPABILITY_U32S_3] = {};
  if (syscall(SYS_capset, &Header, None) != 0)
    return Status::error(format("capset: %s", std::strerror(errno)));
  return Status();
}

/// Owns a libseccomp context.
struct Filter {
  scmp_filter_ctx Ctx = seccomp_init(SCMP_ACT_ALLOW);
  ~Filter() {
    if (Ctx)
      seccomp_release(Ctx);
  }
};

Status failed(const char *What, int Rc) {
  return Status::error(format("seccomp: %s: %s", What, std::strerror(-Rc)));
}
} // namespace

Status confineSession(bool SameHost) {
  if (!SameHost) {
    if (Status S = protectFromPeers(); !S.ok())
      return S;
    if (Status S = dropCapabilities(); !S.ok())
      return S;
  } else if (rlimit NoCore{0, 0}; setrlimit(RLIMIT_CORE, &NoCore) != 0) {
    return Status::error(
        format("setrlimit(RLIMIT_CORE): %s", std::strerror(errno)));
  }
  Filter F;
  if (!F.Ctx)
    return Status::error("seccomp: cannot create a filter");
  const auto Self = static_cast<scmp_datum_t>(getpid());
  const uint32_t Deny = SCMP_ACT_ERRNO(EPERM);
  // Signals carry the target process in their first argument: anything but
  // this process is refused (kill(0) and kill(-1) reach others too).
  for (int Call : {SCMP_SYS(kill), SCMP_SYS(tgkill), SCMP_SYS(rt_sigqueueinfo),
                   SCMP_SYS(rt_tgsigqueueinfo)})
    if (int Rc =
            seccomp_rule_add(F.Ctx, Deny, Call, 1, SCMP_A0(SCMP_CMP_NE, Self));
        Rc < 0)
      return failed("signal rule", Rc);
  // tkill names a thread alone (a single-threaded process's thread id is
  // its pid); glibc does not use it. ptrace is never needed by a kernel,
  // and pidfds could signal without naming a pid.
  // Nor may processes it starts leave the session's process group, which
  // the supervisor kills with it.
  for (int Call :
       {SCMP_SYS(tkill), SCMP_SYS(ptrace), SCMP_SYS(pidfd_send_signal),
        SCMP_SYS(pidfd_open), SCMP_SYS(pidfd_getfd), SCMP_SYS(process_madvise),
        SCMP_SYS(setsid), SCMP_SYS(setpgid)})
    if (int Rc = seccomp_rule_add(F.Ctx, Deny, Call, 0); Rc < 0)
      return failed("rule", Rc);
  // Asynchronous I/O signals go to the descriptor's owner, which could be
  // any process of the user (F_SETOWN_EX names it through a pointer).
  if (int Rc = seccomp_rule_add(F.Ctx, Deny, SCMP_SYS(fcntl), 2,
                                SCMP_A1(SCMP_CMP_EQ, F_SETOWN),
                                SCMP_A2(SCMP_CMP_NE, Self));
      Rc < 0)
    return failed("fcntl rule", Rc);
  if (int Rc = seccomp_rule_add(F.Ctx, Deny, SCMP_SYS(fcntl), 1,
                                SCMP_A1(SCMP_CMP_EQ, F_SETOWN_EX));
      Rc < 0)
    return failed("fcntl rule", Rc);
  // The same through ioctl, and a terminal's input faked (TIOCSTI) or its
  // console driven (TIOCLINUX); the kernel reads the command as 32 bits.
  for (unsigned long Cmd : {FIOSETOWN, SIOCSPGRP, TIOCSTI, TIOCLINUX})
    if (int Rc =
            seccomp_rule_add(F.Ctx, Deny, SCMP_SYS(ioctl), 1,
                             SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, Cmd));
        Rc < 0)
      return failed("ioctl rule", Rc);
  if (int Rc = seccomp_load(F.Ctx); Rc < 0)
    return failed("load", Rc);
  return Status();
}

} // namespace ompdpu::server
