//===- adapter.h - What every libomptarget ABI adapter needs ----*- C++ -*-===//
//
// The translations between libomptarget's plugin types and the device logic
// that are the same in every LLVM version an adapter serves (14-16): finding
// a device, reporting a failure, target tables, async-info queues, argument
// offsets, allocation kinds and the last-allocation record libompdpu reads.
// The abi/llvm<N>/ files hold only what differs between versions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "dpu_plugin.h"
#include "omptarget_abi.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ompdpu::abi {

/// The device with this plugin-local id, or null after saying why.
plugin::DpuDevice *deviceOrReport(int32_t Id);

/// OFFLOAD_SUCCESS, or OFFLOAD_FAIL after a message naming the device.
int32_t check(const plugin::DpuDevice &D, const Status &S);

/// The target table of an image just loaded on device Id (kept until the
/// plugin is unloaded: libomptarget holds on to it).
__tgt_target_table *buildTable(int32_t Id,
                               const std::vector<plugin::LoadedEntry> &Loaded);

/// An image loaded on a device: what 18's __tgt_device_binary handle names.
struct LoadedImage {
  int32_t Device = -1;
  std::vector<plugin::LoadedEntry> Entries;
};
/// Keep an image's entries until the plugin is unloaded; returns its record.
const LoadedImage *rememberImage(int32_t Id,
                                 std::vector<plugin::LoadedEntry> Loaded);
/// The entry of that name in a loaded image, or null.
const plugin::LoadedEntry *findEntry(const LoadedImage &I, const char *Name);

/// True for a kernel of a remembered image that runs a global constructor or
/// destructor (named "..._ctor"/"..._dtor", as LLVM 18 tells them apart).
bool isCtorOrDtor(const void *Kernel);

/// The host entries of an image, in the order its device entries must match.
std::vector<plugin::HostEntry> hostEntries(const __tgt_device_image &Image);

/// Size in bytes of an image's ELF file.
size_t imageSize(const __tgt_device_image &Image);

/// The device queue behind an async info, made on first use; null for none.
plugin::AsyncQueue *queueOf(plugin::DpuDevice &D, __tgt_async_info *Async);

/// The device queue an async info has, if any, left in place.
plugin::AsyncQueue *existingQueue(__tgt_async_info *Async);

/// The async info's queue, taken out of it (synchronize must reset it).
plugin::AsyncQueue *takeQueue(__tgt_async_info *Async);

/// An omp_target_alloc kind (TargetAllocTy) as the device logic's.
plugin::MemoryKind memoryKind(int32_t Kind);

/// The calling thread's last allocation, for libompdpu to map OpenMP device
/// numbers to DPUs (see ompdpu_device()).
struct LastAllocation {
  int32_t Device = -1; ///< -1: none yet
  void *Ptr = nullptr;
  uint64_t Count = 0; ///< allocations made by this thread
};
/// Record an allocation of the calling thread.
void noteAllocation(int32_t Id, void *Ptr);
/// The calling thread's record.
const LastAllocation &lastAllocation();

/// Run a kernel whose argument K is Args[K] + Offsets[K] (Offsets may be
/// null), after Leading arguments of value ~0 (LLVM 18's "no launch
/// environment" for the implicit first argument of clang 18's kernels).
int32_t launchWithOffsets(int32_t Id, void *Entry, void **Args,
                          const ptrdiff_t *Offsets, int32_t NumArgs,
                          __tgt_async_info *Async, size_t Leading = 0);

/// With LIBOMPTARGET_INFO's plugin-kernel bit (0x10), the line LLVM's own
/// plugins print before each launch from 16 on (tests match it), as its
/// host plugin reports a CPU launch: one call of the region's function, the
/// teams and threads being libomp's inside it.
void printLaunchInfo(int32_t Id, const void *Kernel);
/// Implicit leading kernel arguments of this library's libomptarget version
/// for that kernel (18: one, but for constructors and destructors).
size_t implicitArguments(const void *Kernel);

/// The major version of the libomptarget in this process, from its file name
/// (libomptarget.so.<N>); 0 when the name carries none (Debian's 14).
int libomptargetMajor();

/// Whether this library has the plugin ABI of libomptarget `Major`, and the
/// versions it serves ("14 and 15"); defined by each library's adapter.
bool servesLibomptarget(int Major);
extern const char *const kServedVersions;

/// OFFLOAD_SUCCESS when this library serves the libomptarget in this
/// process; otherwise OFFLOAD_FAIL, after saying which plugin directory does.
int32_t checkLibomptargetVersion();

} // namespace ompdpu::abi

/// Declares `DpuDevice *D` for device Id, or returns OFFLOAD_FAIL.
#define OMPDPU_DEVICE_OR_FAIL(Id)                                              \
  ::ompdpu::plugin::DpuDevice *D = ::ompdpu::abi::deviceOrReport(Id);          \
  if (!D)                                                                      \
  return ::ompdpu::abi::OFFLOAD_FAIL
