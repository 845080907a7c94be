//===- confinement.h - What a session's kernels may not do ------*- C++ -*-===//
//
// A session runs other people's code as the server's user. Confined, it
// cannot signal, trace or read any process but itself: not the supervisor,
// not another client's session. Signals are filtered with seccomp (a kernel
// may still signal its own threads, as raise() and pthread_kill() do), and
// the supervisor and every session are not dumpable, so that no process of
// the same user may attach to them or read their memory through /proc.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/status.h"

namespace ompdpu::server {

/// Keep processes of the same user from tracing or reading this one, and
/// switch core dumps off (the supervisor, at start).
Status protectFromPeers();

/// Confine the calling session process (before any client code runs):
/// protectFromPeers(), no capabilities (a server started as root) unless
/// KeepCapabilities, and a seccomp filter that fails, with EPERM, every
/// signal aimed at another process and every ptrace. A session must keep
/// its capabilities to reach a privileged client on the same machine by
/// cma: the kernel lets a process read another's memory only when it holds
/// all the capabilities the other holds.
Status confineSession(bool KeepCapabilities);

} // namespace ompdpu::server
