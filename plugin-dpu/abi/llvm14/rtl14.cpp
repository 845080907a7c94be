//===- rtl14.cpp - Entry points of libomptarget 14 and 15 -----------------===//
//
// What libomptarget 14 and 15 ask for beyond the entry points every version
// shares (abi/common/rtl_common.cpp): data_delete without a kind and the
// run functions, which 16 replaced with launch_kernel.
//
//===----------------------------------------------------------------------===//
#include "adapter.h"

using namespace ompdpu::abi;

extern "C" {
#pragma GCC visibility push(default)

int32_t __tgt_rtl_data_delete(int32_t Id, void *Ptr) {
  OMPDPU_DEVICE_OR_FAIL(Id);
  return check(*D, D->free(Ptr));
}

// Team counts and thread limits are not used: libomp on the server picks
// them, as it does under LLVM's own host plugin.
int32_t __tgt_rtl_run_target_team_region_async(int32_t Id, void *Entry,
                                               void **Args, ptrdiff_t *Offsets,
                                               int32_t NumArgs, int32_t,
                                               int32_t, uint64_t,
                                               __tgt_async_info *Async) {
  return launchWithOffsets(Id, Entry, Args, Offsets, NumArgs, Async);
}

int32_t __tgt_rtl_run_target_team_region(int32_t Id, void *Entry, void **Args,
                                         ptrdiff_t *Offsets, int32_t NumArgs,
                                         int32_t, int32_t, uint64_t) {
  return launchWithOffsets(Id, Entry, Args, Offsets, NumArgs, nullptr);
}

int32_t __tgt_rtl_run_target_region_async(int32_t Id, void *Entry, void **Args,
                                          ptrdiff_t *Offsets, int32_t NumArgs,
                                          __tgt_async_info *Async) {
  return launchWithOffsets(Id, Entry, Args, Offsets, NumArgs, Async);
}

int32_t __tgt_rtl_run_target_region(int32_t Id, void *Entry, void **Args,
                                    ptrdiff_t *Offsets, int32_t NumArgs) {
  return launchWithOffsets(Id, Entry, Args, Offsets, NumArgs, nullptr);
}

#pragma GCC visibility pop
} // extern "C"
