//===- options.h - ompdpu-server command line -------------------*- C++ -*-===//
#pragma once

#include "common/status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ompdpu::server {

/// Parsed command line of ompdpu-server.
struct ServerOptions {
  /// --listen ADDR:PORT (on a BlueField: the host-facing interface's
  /// address, e.g. tmfifo_net0's 192.168.100.2).
  std::string Listen = "127.0.0.1:18515";
  std::vector<int> Cores;   ///< --cores LIST (empty: all)
  uint64_t Memory = 0;      ///< --memory BYTES (0: 90% of RAM)
  int ReadyFd = -1;         ///< --ready-fd N: write port there
  bool Verbose = false;     ///< --verbose
  double SpinMicros = 1000; ///< --spin-us N
  /// --handshake-timeout S: a connection that sends no Hello this long is
  /// dropped.
  double HandshakeTimeout = 10;
  /// --max-startups N[:M]: connections that sent no connection request yet,
  /// in all and from one address (the oldest are closed beyond).
  unsigned MaxStartups = 512, MaxStartupsPerSource = 64;
  unsigned MaxSessions = 64;        ///< --max-sessions N
  unsigned MaxSessionsPerUser = 16; ///< --max-sessions-per-user N
  std::vector<std::string> Keys;    ///< --key FILE (repeatable)
  bool Munge = false;               ///< --munge
  std::string MungeSocket;          ///< --munge-socket PATH ("": default)
  bool Insecure = false;            ///< --insecure: serve unauthenticated
  std::string RootUser = "ompdpu";  ///< --root-user NAME
  bool RootSessions = false;        ///< --root-sessions (emulation as root)
  uint64_t MaxOpenFiles = 4096;     ///< --max-open-files N (per session)
  uint64_t MaxProcesses = 4096;     ///< --max-processes N (per user)
  /// --address-space BYTES per session (0: --memory plus 16 GiB for code,
  /// stacks and UCX's mappings).
  uint64_t AddressSpace = 0;
  /// --shared-cores: other busy processes run on this server's cores
  /// (emulated DPUs): yield the core after every poll.
  bool SharedCores = false;
  /// --mpi: the servers are one MPI job; rank r listens on PORT+r and runs
  /// its client's kernels in its own (MPI) process, one client at a time.
  bool Mpi = false;
  int MpiRank = 0, MpiSize = 1;
  /// MPI mode: called by an idle session loop so that MPI operations that
  /// kernels started (and will wait for in a later kernel) make progress
  /// between kernels.
  void (*MpiProgress)() = nullptr;
  /// Called once the server accepts clients on Where (host:port).
  void (*OnListening)(const std::string &Where) = nullptr;
  // Internal: run as a session process (started by the supervisor).
  bool Session = false;
  int ControlFd = -1;
};

/// Parse "0-3,6" into {0,1,2,3,6}.
Expected<std::vector<int>> parseCoreList(const std::string &S);
/// Parse argv; on error the Status explains which option is wrong.
Expected<ServerOptions> parseServerOptions(int Argc, char **Argv);
/// The --help text.
const char *serverUsage();

} // namespace ompdpu::server
