//===- device_map.h - Which DPUs a process on a cluster node uses -*- C++
//-*-===//
//
// A devices file lists DPUs for every host ("dpu0:18515") and, for a
// cluster, per node ("n1 = 10.0.1.2:18515, 10.0.1.3:18515"): a process
// takes its own node's line, and each process an MPI launcher started on
// that node takes its share of it by its local rank, as GPU codes pick
// their GPU.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/config.h"

#include <optional>
#include <string>
#include <vector>

namespace ompdpu {

/// One node's line of a cluster map.
struct NodeDevices {
  std::string Node;
  std::vector<DeviceAddress> Devices;
};

/// A devices file: DPUs for every host, and DPUs per node.
struct DeviceMap {
  std::vector<DeviceAddress> Everywhere;
  std::vector<NodeDevices> Nodes;
};

/// Parse a devices file: "host:port" lines and "NODE = host:port[, ...]"
/// lines, '#' comments; a node named twice is an error.
Expected<DeviceMap> parseDeviceMap(const std::string &Text);

/// The node's line (by full name, or by the name before its first dot),
/// else the lines for every host; nullptr when neither exists.
const std::vector<DeviceAddress> *devicesOfNode(const DeviceMap &Map,
                                                const std::string &Hostname);

/// This process's place among the processes a launcher started on its node.
struct LocalRank {
  unsigned Rank = 0;
  unsigned Size = 1;
  const char *From = ""; ///< the variable that gave it
};

/// The local rank from Open MPI's, MPICH's or Slurm's variables; none
/// outside a launcher; an error for values that contradict each other.
Expected<std::optional<LocalRank>> localRankFrom(const EnvLookup &Env);

/// Indices of the devices local rank R of S uses among N: a contiguous
/// share when there are at least as many devices as ranks, else device
/// R mod N (ranks then share a DPU).
std::vector<size_t> shareOfDevices(size_t N, const LocalRank &R);

/// This machine's host name (gethostname).
std::string thisHostname();

} // namespace ompdpu
