//===- emulator.h - Emulated DPU servers on loopback ------------*- C++ -*-===//
#pragma once

#include "common/status.h"

#include <string>
#include <sys/types.h>
#include <vector>

namespace ompdpu::tools {

/// One running ompdpu-server started by the front door.
struct EmulatedServer {
  pid_t Pid = -1;
  std::string Address; ///< "127.0.0.1:PORT"
  std::vector<int> Cores;
};

/// How to start emulated DPUs.
struct EmulatorOptions {
  int Count = 1;
  bool Pin = false;    ///< give each DPU its own cores
  int CoresPerDpu = 0; ///< 0: an even share, at least 1
  std::string Memory;  ///< --memory for each server ("" = default)
  bool Verbose = false;
};

/// Start the servers (each on a free port) and wait until each listens.
/// On failure the ones already started are stopped.
Expected<std::vector<EmulatedServer>>
startEmulatedServers(const std::string &ServerExe, const EmulatorOptions &O,
                     std::vector<int> &HostCores);

/// Stop servers: SIGTERM, then SIGKILL after a grace period.
void stopServers(std::vector<EmulatedServer> &Servers);

} // namespace ompdpu::tools
