//===- supervisor.h - Accept clients, start and watch sessions --*- C++ -*-===//
#pragma once

#include "server/options.h"

namespace ompdpu::server {

/// Listen for clients; give each its own session process; tell a client
/// when its session dies and why; keep serving others. Returns the exit code.
int runSupervisor(const ServerOptions &Opts, const char *SelfExe);

} // namespace ompdpu::server
