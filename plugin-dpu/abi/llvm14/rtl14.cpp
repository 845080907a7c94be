//===- rtl14.cpp - libomptarget 14 plugin ABI -----------------------------===//
//
// The whole ABI of libomptarget 14 in one extern "C" block. Each entry point
// finds the device, calls the device logic and, on error, prints a message
// naming the device and returns OFFLOAD_FAIL. No behaviour lives here.
//
//===----------------------------------------------------------------------===//
#include "common/elf_image.h"
#include "common/log.h"
#include "dpu_plugin.h"
#include "omptarget_abi.h"

using namespace ompdpu;
using namespace ompdpu::plugin;
using ompdpu::abi::OFFLOAD_FAIL;
using ompdpu::abi::OFFLOAD_SUCCESS;

namespace {
DpuDevice *deviceOrReport(int32_t Id) {
  DpuDevice *D = DpuPlugin::get().device(Id);
  if (!D)
    log(LogLevel::Error, "invalid device id %d (%d devices)", Id,
        DpuPlugin::get().numDevices());
  return D;
}

int32_t check(DpuDevice *D, const Status &S) {
  if (S.ok())
    return OFFLOAD_SUCCESS;
  log(LogLevel::Error, "%s: %s", D->name().c_str(), S.message().c_str());
  return OFFLOAD_FAIL;
}

/// The last allocation made by this thread, so that libompdpu can map
/// OpenMP device numbers to DPUs (see ompdpu_device()).
thread_local int32_t LastAllocDevice = -1;
thread_local void *LastAllocPtr = nullptr;
thread_local uint64_t AllocCount = 0;

/// Gracefully leave every server when the plugin is unloaded.
__attribute__((destructor)) void unloadPlugin() { DpuPlugin::get().shutdown(); }
} // namespace

#define DEVICE_OR_FAIL(Id)                                                     \
  DpuDevice *D = deviceOrReport(Id);                                           \
  if (!D)                                                                      \
  return OFFLOAD_FAIL

extern "C" {
#pragma GCC visibility push(default)

int32_t __tgt_rtl_is_valid_binary(__tgt_device_image *Image) {
  auto Machine =
      elfMachine(Image->ImageStart, static_cast<char *>(Image->ImageEnd) -
                                        static_cast<char *>(Image->ImageStart));
  return Machine && DpuPlugin::get().acceptsMachine(*Machine);
}

int32_t __tgt_rtl_number_of_devices() { return DpuPlugin::get().numDevices(); }

int64_t __tgt_rtl_init_requires(int64_t Flags) {
  if (Flags & abi::OMP_REQ_UNIFIED_SHARED_MEMORY)
    log(LogLevel::Warning, "'requires unified_shared_memory' cannot be met: "
                           "DPU memory is separate from host memory");
  DpuPlugin::get().RequiresFlags = Flags;
  return Flags;
}

int32_t __tgt_rtl_init_device(int32_t Id) {
  return deviceOrReport(Id) ? OFFLOAD_SUCCESS : OFFLOAD_FAIL;
}

int32_t __tgt_rtl_supports_empty_images() { return 1; }

void __tgt_rtl_set_info_flag(uint32_t) {}

void __tgt_rtl_print_device_info(int32_t Id) {
  if (DpuDevice *D = deviceOrReport(Id))
    D->printInfo();
}

__tgt_target_table *__tgt_rtl_load_binary(int32_t Id,
                                          __tgt_device_image *Image) {
  DpuDevice *D = deviceOrReport(Id);
  if (!D)
    return nullptr;
  auto T = D->loadBinary(Image);
  if (!T) {
    check(D, T.status());
    return nullptr;
  }
  return *T;
}

void *__tgt_rtl_data_alloc(int32_t Id, int64_t Size, void *, int32_t Kind) {
  DpuDevice *D = deviceOrReport(Id);
  if (!D)
    return nullptr;
  auto P = D->alloc(Size, Kind);
  if (!P) {
    check(D, P.status());
    return nullptr;
  }
  LastAllocDevice = Id;
  LastAllocPtr = *P;
  ++AllocCount;
  return *P;
}

int32_t __tgt_rtl_data_delete(int32_t Id, void *Ptr) {
  DEVICE_OR_FAIL(Id);
  return check(D, D->free(Ptr));
}

int32_t __tgt_rtl_data_submit_async(int32_t Id, void *TgtPtr, void *HstPtr,
                                    int64_t Size, __tgt_async_info *Async) {
  DEVICE_OR_FAIL(Id);
  return check(D, D->submit(TgtPtr, HstPtr, Size, Async));
}

int32_t __tgt_rtl_data_submit(int32_t Id, void *TgtPtr, void *HstPtr,
                              int64_t Size) {
  return __tgt_rtl_data_submit_async(Id, TgtPtr, HstPtr, Size, nullptr);
}

int32_t __tgt_rtl_data_retrieve_async(int32_t Id, void *HstPtr, void *TgtPtr,
                                      int64_t Size, __tgt_async_info *Async) {
  DEVICE_OR_FAIL(Id);
  return check(D, D->retrieve(HstPtr, TgtPtr, Size, Async));
}

int32_t __tgt_rtl_data_retrieve(int32_t Id, void *HstPtr, void *TgtPtr,
                                int64_t Size) {
  return __tgt_rtl_data_retrieve_async(Id, HstPtr, TgtPtr, Size, nullptr);
}

int32_t __tgt_rtl_is_data_exchangable(int32_t SrcId, int32_t DstId) {
  DpuPlugin &P = DpuPlugin::get();
  return P.device(SrcId) && P.device(DstId);
}

int32_t __tgt_rtl_data_exchange_async(int32_t SrcId, void *SrcPtr,
                                      int32_t DstId, void *DstPtr, int64_t Size,
                                      __tgt_async_info *Async) {
  DEVICE_OR_FAIL(SrcId);
  DpuDevice *Dst = deviceOrReport(DstId);
  if (!Dst)
    return OFFLOAD_FAIL;
  return check(D, D->exchange(SrcPtr, *Dst, DstPtr, Size, Async));
}

int32_t __tgt_rtl_data_exchange(int32_t SrcId, void *SrcPtr, int32_t DstId,
                                void *DstPtr, int64_t Size) {
  return __tgt_rtl_data_exchange_async(SrcId, SrcPtr, DstId, DstPtr, Size,
                                       nullptr);
}

// Team counts and thread limits are not used: libomp on the server picks
// them, as it does under LLVM's own host plugin.
int32_t __tgt_rtl_run_target_team_region_async(int32_t Id, void *Entry,
                                               void **Args, ptrdiff_t *Offsets,
                                               int32_t NumArgs, int32_t,
                                               int32_t, uint64_t,
                                               __tgt_async_info *Async) {
  DEVICE_OR_FAIL(Id);
  return check(D, D->launch(Entry, Args, Offsets, NumArgs, Async));
}

int32_t __tgt_rtl_run_target_team_region(int32_t Id, void *Entry, void **Args,
                                         ptrdiff_t *Offsets, int32_t NumArgs,
                                         int32_t Teams, int32_t ThreadLimit,
                                         uint64_t TripCount) {
  return __tgt_rtl_run_target_team_region_async(Id, Entry, Args, Offsets,
                                                NumArgs, Teams, ThreadLimit,
                                                TripCount, nullptr);
}

int32_t __tgt_rtl_run_target_region_async(int32_t Id, void *Entry, void **Args,
                                          ptrdiff_t *Offsets, int32_t NumArgs,
                                          __tgt_async_info *Async) {
  return __tgt_rtl_run_target_team_region_async(Id, Entry, Args, Offsets,
                                                NumArgs, 1, 1, 0, Async);
}

int32_t __tgt_rtl_run_target_region(int32_t Id, void *Entry, void **Args,
                                    ptrdiff_t *Offsets, int32_t NumArgs) {
  return __tgt_rtl_run_target_region_async(Id, Entry, Args, Offsets, NumArgs,
                                           nullptr);
}

int32_t __tgt_rtl_synchronize(int32_t Id, __tgt_async_info *Async) {
  DEVICE_OR_FAIL(Id);
  return check(D, D->synchronize(Async));
}

int32_t __tgt_rtl_create_event(int32_t Id, void **EventPtr) {
  DEVICE_OR_FAIL(Id);
  *EventPtr = acquireEvent();
  return OFFLOAD_SUCCESS;
}

int32_t __tgt_rtl_record_event(int32_t Id, void *EventPtr,
                               __tgt_async_info *Async) {
  DEVICE_OR_FAIL(Id);
  return check(D, D->recordEvent(static_cast<Event *>(EventPtr), Async));
}

int32_t __tgt_rtl_wait_event(int32_t Id, void *EventPtr,
                             __tgt_async_info *Async) {
  DEVICE_OR_FAIL(Id);
  return check(D, D->waitEvent(static_cast<Event *>(EventPtr), Async));
}

int32_t __tgt_rtl_sync_event(int32_t Id, void *EventPtr) {
  DEVICE_OR_FAIL(Id);
  return check(D, D->waitEvent(static_cast<Event *>(EventPtr), nullptr));
}

int32_t __tgt_rtl_destroy_event(int32_t, void *EventPtr) {
  releaseEvent(static_cast<Event *>(EventPtr));
  return OFFLOAD_SUCCESS;
}

/// ompdpu's own query (not libomptarget's): which device made the calling
/// thread's last allocation, and at what address. libompdpu uses it to map
/// OpenMP device numbers to DPUs.
int32_t __ompdpu_plugin_last_alloc(int32_t *Id, void **Ptr, uint64_t *Count) {
  *Id = LastAllocDevice;
  *Ptr = LastAllocPtr;
  *Count = AllocCount;
  return LastAllocDevice >= 0;
}

/// ompdpu's own query: number of DPUs this plugin copy drives.
int32_t __ompdpu_plugin_num_devices() { return DpuPlugin::get().numDevices(); }

#pragma GCC visibility pop
} // extern "C"
