//===- emulator.h - Emulated DPU servers on loopback ------------*- C++ -*-===//
#pragma once

#include "common/status.h"
#include "tools/core_plan.h"

#include <functional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace ompdpu::tools {

/// One running ompdpu-server started by the front door.
struct EmulatedServer {
  pid_t Pid = -1;
  std::string Address; ///< "127.0.0.1:PORT"
};

/// How to start emulated DPUs.
struct EmulatorOptions {
  int Count = 1;
  bool Pin = false;    ///< give each DPU its own cores
  int CoresPerDpu = 0; ///< 0: an even share, at least 1
  std::string Memory;  ///< --memory for each server ("" = default)
  bool Verbose = false;
  bool QuietStdout = false; ///< servers write stdout to stderr
  std::string KeyFile;      ///< the servers' --key (RunKey)
};

/// The servers' authentication options: the run's key, and for a run by
/// root, root's sessions kept as root (a private emulated DPU of root's).
std::vector<std::string> authArgs(const EmulatorOptions &O);

/// Takes the emulator option at Argv[K] (and its value, advancing K):
/// 1 if it was one, 0 if not, -1 on a bad value (reported).
int takeEmulatorOption(int Argc, char **Argv, int &K, EmulatorOptions &O);

/// V as a whole number from Lo to Hi; else -1 after an error naming Option.
int countFrom(const char *Option, const char *V, int Lo, int Hi);

/// The cores for O: planned with --pin (warning when they do not suffice),
/// else shared by all.
CorePlan planFor(const EmulatorOptions &O);

/// A reaped process's end, in words ("killed by signal 9").
std::string describeExit(int WStatus);

/// Fork and exec Args (Args[0] looked up on PATH) with Setup run in the child
/// first (its file descriptors); the child's pid, or -1.
pid_t spawn(std::vector<std::string> Args, const std::function<void()> &Setup);

/// Plan the cores (with --pin) and start the servers, each on a free port,
/// waiting until each listens. On failure the ones started are stopped.
Expected<std::vector<EmulatedServer>>
startEmulatedServers(const std::string &ServerExe, const EmulatorOptions &O,
                     CorePlan &Plan);

/// Stop servers: SIGTERM, then SIGKILL after a grace period.
void stopServers(std::vector<EmulatedServer> &Servers);

} // namespace ompdpu::tools
