//===- rtl_common.cpp - Plugin entry points of libomptarget 14-18 ---------===//
//
// The __tgt_rtl_* entry points whose signature and meaning are the same in
// every libomptarget an adapter serves (14 to 18): each finds the
// device, calls one method of the device logic and turns its Status into
// OFFLOAD_SUCCESS or OFFLOAD_FAIL. Synchronous entry points forward to the
// asynchronous ones with no async info. The version-specific ones are in
// abi/llvm<N>/.
//
//===----------------------------------------------------------------------===//
#include "adapter.h"
#include "common/elf_image.h"
#include "common/log.h"

using namespace ompdpu;
using namespace ompdpu::abi;
using namespace ompdpu::plugin;

namespace {
/// Gracefully leave every server when the plugin is unloaded.
__attribute__((destructor)) void unloadPlugin() { DpuPlugin::get().shutdown(); }
} // namespace

extern "C" {
#pragma GCC visibility push(default)

int32_t __tgt_rtl_is_valid_binary(__tgt_device_image *Image) {
  auto Machine = elfMachine(Image->ImageStart, imageSize(*Image));
  if (!Machine)
    return 0;
  if (DpuPlugin::get().acceptsMachine(*Machine))
    return 1;
  DpuPlugin::get().explainRefusedImage(*Machine);
  return 0;
}

int32_t __tgt_rtl_number_of_devices() { return DpuPlugin::get().numDevices(); }

int64_t __tgt_rtl_init_requires(int64_t Flags) {
  if (Flags & OMP_REQ_UNIFIED_SHARED_MEMORY)
    log(LogLevel::Warning,
        "'requires unified_shared_memory' cannot be met: DPU memory is "
        "separate from host memory; a region may use only data mapped with "
        "'close' or placed with omp_target_alloc/omp_target_associate_ptr");
  DpuPlugin::get().RequiresFlags = Flags;
  // 14-17 ignore the result; 18 takes it as a status.
  return OFFLOAD_SUCCESS;
}

int32_t __tgt_rtl_init_device(int32_t Id) {
  // A server that did not answer initialises too: 18 numbers only devices
  // that do, and its number must stay taken. Its image load fails, naming it.
  return deviceOrReport(Id) ? OFFLOAD_SUCCESS : OFFLOAD_FAIL;
}

int32_t __tgt_rtl_supports_empty_images() { return 1; }

void __tgt_rtl_set_info_flag(uint32_t) {}

void __tgt_rtl_print_device_info(int32_t Id) {
  if (DpuDevice *D = deviceOrReport(Id))
    D->printInfo();
}

void *__tgt_rtl_data_alloc(int32_t Id, int64_t Size, void *, int32_t Kind) {
  DpuDevice *D = deviceOrReport(Id);
  if (!D)
    return nullptr;
  auto P = D->alloc(Size, memoryKind(Kind));
  if (!P) {
    check(*D, P.status());
    return nullptr;
  }
  noteAllocation(Id, *P);
  return *P;
}

int32_t __tgt_rtl_data_submit_async(int32_t Id, void *TgtPtr, void *HstPtr,
                                    int64_t Size, __tgt_async_info *Async) {
  OMPDPU_DEVICE_OR_FAIL(Id);
  return check(*D, D->submit(TgtPtr, HstPtr, Size, queueOf(*D, Async)));
}

int32_t __tgt_rtl_data_submit(int32_t Id, void *TgtPtr, void *HstPtr,
                              int64_t Size) {
  return __tgt_rtl_data_submit_async(Id, TgtPtr, HstPtr, Size, nullptr);
}

int32_t __tgt_rtl_data_retrieve_async(int32_t Id, void *HstPtr, void *TgtPtr,
                                      int64_t Size, __tgt_async_info *Async) {
  OMPDPU_DEVICE_OR_FAIL(Id);
  return check(*D, D->retrieve(HstPtr, TgtPtr, Size, queueOf(*D, Async)));
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
  OMPDPU_DEVICE_OR_FAIL(SrcId);
  DpuDevice *Dst = deviceOrReport(DstId);
  if (!Dst)
    return OFFLOAD_FAIL;
  return check(*D, D->exchange(SrcPtr, *Dst, DstPtr, Size, queueOf(*D, Async)));
}

int32_t __tgt_rtl_data_exchange(int32_t SrcId, void *SrcPtr, int32_t DstId,
                                void *DstPtr, int64_t Size) {
  return __tgt_rtl_data_exchange_async(SrcId, SrcPtr, DstId, DstPtr, Size,
                                       nullptr);
}

int32_t __tgt_rtl_synchronize(int32_t Id, __tgt_async_info *Async) {
  OMPDPU_DEVICE_OR_FAIL(Id);
  // libomptarget calls this only with a queue, which must be reset.
  return check(*D, D->synchronize(takeQueue(Async)));
}

int32_t __tgt_rtl_create_event(int32_t Id, void **EventPtr) {
  OMPDPU_DEVICE_OR_FAIL(Id);
  *EventPtr = acquireEvent();
  return OFFLOAD_SUCCESS;
}

int32_t __tgt_rtl_record_event(int32_t Id, void *EventPtr,
                               __tgt_async_info *Async) {
  OMPDPU_DEVICE_OR_FAIL(Id);
  return check(
      *D, D->recordEvent(static_cast<Event *>(EventPtr), existingQueue(Async)));
}

int32_t __tgt_rtl_wait_event(int32_t Id, void *EventPtr,
                             __tgt_async_info *Async) {
  OMPDPU_DEVICE_OR_FAIL(Id);
  return check(
      *D, D->waitEvent(static_cast<Event *>(EventPtr), existingQueue(Async)));
}

int32_t __tgt_rtl_sync_event(int32_t Id, void *EventPtr) {
  OMPDPU_DEVICE_OR_FAIL(Id);
  return check(*D, D->waitEvent(static_cast<Event *>(EventPtr), nullptr));
}

int32_t __tgt_rtl_destroy_event(int32_t, void *EventPtr) {
  releaseEvent(static_cast<Event *>(EventPtr));
  return OFFLOAD_SUCCESS;
}

#pragma GCC visibility pop
} // extern "C"
