//===- core_plan.h - The cores of emulated DPUs and the program -*- C++ -*-===//
#pragma once

#include <string>
#include <vector>

namespace ompdpu::tools {

/// The split of this machine's cores between the program and N emulated DPUs.
struct CorePlan {
  std::vector<int> HostCores;             ///< the program's cores
  std::vector<std::vector<int>> DpuCores; ///< per DPU; empty lists: unpinned
  bool Fits = true; ///< every DPU and the program have cores of their own
};

/// The cores this process may run on.
std::vector<int> allowedCores();

/// Each DPU takes CoresPerDpu cores (0: an even share of N+1 parties) from
/// the top, the program keeps the rest. When that does not fit, the DPUs
/// share the top half and the program keeps the bottom one (one core: all
/// share it). Allowed must not be empty.
CorePlan planCores(const std::vector<int> &Allowed, int Count, int CoresPerDpu);

/// A plan that pins nothing: every DPU shares every core with the program.
CorePlan unpinnedPlan(const std::vector<int> &Allowed, int Count);

/// The ompdpu-server options DPU K needs for the cores it shares: with the
/// program, yield after every poll and sleep after 20 us (its polling would
/// keep the program waiting); with other DPUs only, yield after every poll.
std::vector<std::string> sharingOptions(const CorePlan &P, size_t K);

/// "0,2,3".
std::string joinCores(const std::vector<int> &Cores);

} // namespace ompdpu::tools
