//===- session.h - One client's private server process ----------*- C++ -*-===//
//
// A session serves exactly one client: it owns that client's device memory,
// images and kernels. It runs in its own process (exec'd by the supervisor)
// so that a crashing kernel takes down only its own client.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace ompdpu::server {

/// What the supervisor tells a new session.
struct SessionOptions {
  int ControlFd = -1;           ///< pipe to the supervisor
  int OutputFd = -1;            ///< the output area (-1: output not captured)
  uint64_t Token = 0;           ///< secret the client must present
  uint64_t MemoryLimit = 0;     ///< bytes of device memory this client may hold
  unsigned Cores = 1;           ///< cores kernels may use
  double SpinMicros = 1000;     ///< busy-poll time before sleeping
  bool SharedCores = false;     ///< yield after every poll (--shared-cores)
  bool SameHost = false;        ///< the client is on this machine
  std::string Transports;       ///< UCX_TLS for the session ("": UCX's choice)
  void (*IdleHook)() = nullptr; ///< called now and then while idle
  /// In-process sessions (MPI mode): set by the supervisor to end the
  /// session when its client is gone.
  std::atomic<bool> *ExternalStop = nullptr;
};

/// Run the session until the client says Bye or goes away; returns the
/// process exit code.
int runSession(const SessionOptions &Opts);

/// Run a session on the calling thread of the supervisor's own process (MPI
/// mode: kernels must run in the MPI process); returns when it ends.
int runSessionInProcess(const SessionOptions &Opts);

} // namespace ompdpu::server
