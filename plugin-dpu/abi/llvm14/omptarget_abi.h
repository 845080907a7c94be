//===- omptarget_abi.h - Types shared with libomptarget 14-16 -----*- C -*-===//
//
// The data structures libomptarget 14 passes to plugins (from its public
// omptarget.h; 15 and 16 lay them out the same way), declared here so the
// plugin builds against an unmodified LLVM install that ships no plugin
// headers. Also included from C: the test and benchmark device images lay out
// their entries with it, and the minimal plugin of benchmarks/micro/floor
// implements the same ABI.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/offload_entry.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// A device image and the host entries it must match one to one.
struct __tgt_device_image {
  void *ImageStart;
  void *ImageEnd;
  struct __tgt_offload_entry *EntriesBegin;
  struct __tgt_offload_entry *EntriesEnd;
};

/// The device-side entry table returned by load_binary.
struct __tgt_target_table {
  struct __tgt_offload_entry *EntriesBegin;
  struct __tgt_offload_entry *EntriesEnd;
};

/// Per-construct asynchronous state; Queue is the plugin's.
struct __tgt_async_info {
#ifdef __cplusplus
  void *Queue = nullptr;
#else
  void *Queue;
#endif
};

#ifdef __cplusplus
}

namespace ompdpu::abi {
constexpr int32_t OFFLOAD_SUCCESS = 0;
constexpr int32_t OFFLOAD_FAIL = ~0;
/// omp_target_alloc kinds (TargetAllocTy).
constexpr int32_t TARGET_ALLOC_DEVICE = 0;
constexpr int32_t TARGET_ALLOC_HOST = 1;
constexpr int32_t TARGET_ALLOC_SHARED = 2;
constexpr int32_t TARGET_ALLOC_DEFAULT = 3;
/// OMP_REQ_UNIFIED_SHARED_MEMORY in `#pragma omp requires`.
constexpr int64_t OMP_REQ_UNIFIED_SHARED_MEMORY = 0x008;
} // namespace ompdpu::abi
#endif
