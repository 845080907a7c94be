//===- stop_signals.h - The supervisor's signals, as a descriptor -*- C++ -*-=//
//
// SIGCHLD (a session ended), SIGTERM, SIGINT and SIGHUP (stop) wake the
// supervisor's poll through a pipe; the stop request is a flag the loop
// reads. Signals may land on any thread, UCX's own too.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace ompdpu::server {

/// Install the handlers (once); false when the pipe cannot be made.
bool installStopSignals();
/// The descriptor that becomes readable when a signal arrived.
int signalFd();
/// Read what signals wrote (call after signalFd() was readable).
void drainSignals();
/// SIGTERM, SIGINT or SIGHUP arrived.
bool stopRequested();

} // namespace ompdpu::server
