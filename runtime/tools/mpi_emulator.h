//===- mpi_emulator.h - Emulated DPU servers as one MPI job -----*- C++ -*-===//
#pragma once

#include "common/status.h"
#include "tools/emulator.h"

#include <string>
#include <sys/types.h>
#include <vector>

namespace ompdpu::tools {

/// The servers of N emulated DPUs as one MPI job (ompdpu-server --mpi).
struct MpiJob {
  pid_t Pid = -1;                     ///< mpirun's
  std::vector<std::string> Addresses; ///< rank r's "127.0.0.1:BASE+r"
};

/// Plan the cores, start Mpirun (the caller's mpirun and its options) with
/// one server rank per DPU on N free consecutive ports, and wait until every
/// rank listens. On failure the job is stopped.
Expected<MpiJob> startMpiServers(const std::string &ServerExe,
                                 const EmulatorOptions &O,
                                 const std::vector<std::string> &Mpirun,
                                 CorePlan &Plan);

/// Stop the job: SIGTERM to mpirun (which forwards it to the ranks), then
/// SIGKILL to its process group after a grace period.
void stopMpiJob(MpiJob &Job);

} // namespace ompdpu::tools
