//===- adapter.h - The __tgt_rtl_* adapters' translations -------*- C++ -*-===//
//
// The translations between the plugin types of libomptarget 14-18 (the
// __tgt_rtl_* C ABI of drop-in plugin libraries) and the device logic that
// every such version shares: finding a device, reporting a failure, target
// tables, loaded images, async-info queues and argument offsets. What every
// adapter shares, LLVM 19's in-tree plugin too, is in abi/common/; the
// abi/llvm<N>/ files hold only what differs between versions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "dpu_plugin.h"
#include "memory_kind.h"
#include "omptarget_abi.h"
#include "queries.h"

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

} // namespace ompdpu::abi

/// Declares `DpuDevice *D` for device Id, or returns OFFLOAD_FAIL.
#define OMPDPU_DEVICE_OR_FAIL(Id)                                              \
  ::ompdpu::plugin::DpuDevice *D = ::ompdpu::abi::deviceOrReport(Id);          \
  if (!D)                                                                      \
  return ::ompdpu::abi::OFFLOAD_FAIL
