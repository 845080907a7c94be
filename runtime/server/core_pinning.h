//===- core_pinning.h - The cores a server and its sessions use -*- C++ -*-===//
#pragma once

#include "common/status.h"

#include <vector>

namespace ompdpu::server {

/// Pin this process (and by inheritance every session) to Cores, each one
/// this process may run on; none given: keep its affinity. Returns how many
/// cores it then runs on.
Expected<unsigned> pinToCores(const std::vector<int> &Cores);

} // namespace ompdpu::server
