//===- queries.h - ompdpu's own plugin queries, for every adapter -*- C++
//-*-===//
//
// libompdpu asks the plugin, whichever libomptarget loaded it, which device
// made the calling thread's last allocation, how many DPUs it numbers and
// where each one's server is (ompdpu_device(), ompdpu_device_address()).
// Every adapter records its allocations here and numbers its devices the
// way libomptarget sees them; queries.cpp answers the extern "C" queries.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "dpu_plugin.h"

#include <cstdint>

namespace ompdpu::abi {

/// The calling thread's last allocation, for libompdpu to map OpenMP device
/// numbers to DPUs (see ompdpu_device()).
struct LastAllocation {
  int32_t Device = -1; ///< -1: none yet
  void *Ptr = nullptr;
  uint64_t Count = 0; ///< allocations made by this thread
};
/// Record an allocation of the calling thread on the adapter's device Id.
void noteAllocation(int32_t Id, void *Ptr);
/// The calling thread's record.
const LastAllocation &lastAllocation();

/// How an adapter numbers its devices for libomptarget: the queries answer
/// in the same numbering as the allocations they record.
struct DeviceNumbering {
  int32_t (*Count)();
  plugin::DpuDevice *(*Device)(int32_t Id);
};
/// Replace the default numbering (DpuPlugin's own: every device it drives)
/// with an adapter's; called once, before libomptarget sees any device.
void useDeviceNumbering(DeviceNumbering N);

} // namespace ompdpu::abi
