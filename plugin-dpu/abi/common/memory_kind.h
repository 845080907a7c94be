//===- memory_kind.h - omp_target_alloc kinds as the device logic's -*- C++
//-*-===//
#pragma once

#include "dpu_device.h"

#include <cstdint>

namespace ompdpu::abi {

/// An omp_target_alloc kind (TargetAllocTy: device 0, host 1, shared 2,
/// default 3 in every libomptarget) as the device logic's; newer kinds are
/// the default.
inline plugin::MemoryKind memoryKind(int32_t Kind) {
  return Kind >= 0 && Kind <= static_cast<int32_t>(plugin::MemoryKind::Default)
             ? static_cast<plugin::MemoryKind>(Kind)
             : plugin::MemoryKind::Default;
}

} // namespace ompdpu::abi
