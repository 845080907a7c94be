//===- confinement.h - What a session's kernels may not do ------*- C++ -*-===//
//
// A session runs other people's code as the server's user. Confined, it
// cannot signal, trace or read any process but itself: not the supervisor,
// not another client's session. Signals are filtered with seccomp (a kernel
// may still signal its own threads, as raise() and pthread_kill() do), and
// the supervisor and every session of a client elsewhere or of another
// account are not dumpable, so that no process of the same user may attach
// to them or read their memory through /proc.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/status.h"

namespace ompdpu::server {

/// Keep processes of the same user from tracing or reading this one, and
/// switch core dumps off (the supervisor, at start).
Status protectFromPeers();

/// Confine the calling session process (before any client code runs): a
/// seccomp filter that fails, with EPERM, every signal aimed at another
/// process and every ptrace, and no core dumps. A session whose client is
/// not on this machine under its account is also protectFromPeers() and
/// without capabilities (a server started as root). A SameHost session
/// keeps both: its client (the same account) attaches its shared memory
/// through /proc/<session>/fd and reads its memory by cma, which the kernel
/// allows only into a dumpable process holding no capability the reader
/// lacks.
Status confineSession(bool SameHost);

} // namespace ompdpu::server
