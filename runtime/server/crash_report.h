//===- crash_report.h - Tell the supervisor why a session died --*- C++ -*-===//
#pragma once

namespace ompdpu::server {

/// Install handlers for fatal signals that send SessionCrash to ControlFd
/// (async-signal-safe) and then die of the same signal, so that
/// the supervisor can tell the client which kernel crashed and how.
void installCrashReporter(int ControlFd);

/// Name of the kernel the calling thread runs (for crash reports).
void setCurrentKernel(const char *Name);

} // namespace ompdpu::server
