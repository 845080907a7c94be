//===- rtl16.cpp - Entry points of libomptarget 16 to 18 ------------------===//
//
// What libomptarget 16, 17 and 18 ask for beyond the entry points every version
// shares (abi/common/rtl_common.cpp, and 15's optional ones in abi/llvm15/):
// launch_kernel in place of the run functions, and data_delete with a kind.
//
//===----------------------------------------------------------------------===//
#include "adapter.h"
#include "common/log.h"
#include "omptarget_abi16.h"

using namespace ompdpu::abi;

namespace {
/// The newest KernelArgsTy layout libomptarget 16 and 17 pass.
constexpr uint32_t kKnownKernelArgsVersion = 2;
} // namespace

extern "C" {
#pragma GCC visibility push(default)

// The kind is not needed: the device's pool knows each pointer's allocation.
int32_t __tgt_rtl_data_delete(int32_t Id, void *Ptr, int32_t) {
  OMPDPU_DEVICE_OR_FAIL(Id);
  return check(*D, D->free(Ptr));
}

// Args holds NumArgs arguments (libomptarget rewrites the count after
// mapping), after 18's implicit one; team counts and thread limits are
// libomp's on the server, as under LLVM's own host plugin.
int32_t __tgt_rtl_launch_kernel(int32_t Id, void *Entry, void **Args,
                                ptrdiff_t *Offsets,
                                const KernelArgsTy *KernelArgs,
                                __tgt_async_info *Async) {
  // Version 3 (clang 19) adds an implicit argument this layout misses.
  if (KernelArgs->Version > kKnownKernelArgsVersion) {
    OMPDPU_DEVICE_OR_FAIL(Id);
    return check(
        *D, ompdpu::Status::error(
                ompdpu::ErrorCode::Invalid,
                ompdpu::format("kernel arguments of version %u, "
                               "newer than LLVM 16/17's (%u): was the "
                               "program built with a newer clang?",
                               KernelArgs->Version, kKnownKernelArgsVersion)));
  }
  printLaunchInfo(Id, Entry);
  return launchWithOffsets(Id, Entry, Args, Offsets,
                           static_cast<int32_t>(KernelArgs->NumArgs), Async,
                           implicitArguments(Entry));
}

#pragma GCC visibility pop
} // extern "C"
