//===- rtl14.cpp - libomptarget 14 plugin ABI -----------------------------===//
//
// The whole ABI of libomptarget 14: each entry point finds the device, turns
// the ABI's types into the device logic's (target tables, async-info queues,
// argument offsets, allocation kinds) and, on error, prints a message naming
// the device and returns OFFLOAD_FAIL.
//
//===----------------------------------------------------------------------===//
#include "common/elf_image.h"
#include "common/log.h"
#include "dpu_plugin.h"
#include "omptarget_abi.h"

#include <deque>
#include <list>
#include <map>
#include <mutex>
#include <vector>

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

/// The target table of a loaded image and the storage it points into.
struct ImageTable {
  std::vector<__tgt_offload_entry> Entries;
  std::list<std::string> Names;
  __tgt_target_table Table{};
};
/// Per device, every image loaded (load_binary is never called
/// concurrently, but devices are looked up from any thread).
std::mutex TablesM;
std::map<int32_t, std::list<ImageTable>> Tables;

__tgt_target_table *buildTable(int32_t Id,
                               const std::vector<LoadedEntry> &Loaded) {
  std::lock_guard<std::mutex> L(TablesM);
  ImageTable &IT = Tables[Id].emplace_back();
  IT.Entries.reserve(Loaded.size());
  for (const LoadedEntry &E : Loaded) {
    IT.Names.push_back(E.Name);
    void *Addr = E.Kernel ? static_cast<void *>(E.Kernel)
                          : reinterpret_cast<void *>(E.Address);
    IT.Entries.push_back({Addr, IT.Names.back().data(), E.Size, E.Flags, 0});
  }
  IT.Table.EntriesBegin = IT.Entries.data();
  IT.Table.EntriesEnd = IT.Entries.data() + IT.Entries.size();
  return &IT.Table;
}

/// The device queue behind an async info, made on first use.
AsyncQueue *queueOf(DpuDevice &D, __tgt_async_info *Async) {
  if (!Async)
    return nullptr;
  if (!Async->Queue)
    Async->Queue = D.acquireQueue();
  return static_cast<AsyncQueue *>(Async->Queue);
}

/// The device queue an async info has, if any.
AsyncQueue *existingQueue(__tgt_async_info *Async) {
  return Async ? static_cast<AsyncQueue *>(Async->Queue) : nullptr;
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
  std::vector<HostEntry> Host;
  for (__tgt_offload_entry *E = Image->EntriesBegin; E != Image->EntriesEnd;
       ++E)
    Host.push_back({E->name ? E->name : "", E->size});
  size_t Size = static_cast<char *>(Image->ImageEnd) -
                static_cast<char *>(Image->ImageStart);
  auto Loaded = D->loadImage(Image->ImageStart, Size, Host);
  if (!Loaded) {
    check(D, Loaded.status());
    return nullptr;
  }
  return buildTable(Id, *Loaded);
}

void *__tgt_rtl_data_alloc(int32_t Id, int64_t Size, void *, int32_t Kind) {
  DpuDevice *D = deviceOrReport(Id);
  if (!D)
    return nullptr;
  MemoryKind K = Kind == abi::TARGET_ALLOC_HOST     ? MemoryKind::Host
                 : Kind == abi::TARGET_ALLOC_SHARED ? MemoryKind::Shared
                 : Kind == abi::TARGET_ALLOC_DEVICE ? MemoryKind::Device
                                                    : MemoryKind::Default;
  auto P = D->alloc(Size, K);
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
  return check(D, D->submit(TgtPtr, HstPtr, Size, queueOf(*D, Async)));
}

int32_t __tgt_rtl_data_submit(int32_t Id, void *TgtPtr, void *HstPtr,
                              int64_t Size) {
  return __tgt_rtl_data_submit_async(Id, TgtPtr, HstPtr, Size, nullptr);
}

int32_t __tgt_rtl_data_retrieve_async(int32_t Id, void *HstPtr, void *TgtPtr,
                                      int64_t Size, __tgt_async_info *Async) {
  DEVICE_OR_FAIL(Id);
  return check(D, D->retrieve(HstPtr, TgtPtr, Size, queueOf(*D, Async)));
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
  return check(D, D->exchange(SrcPtr, *Dst, DstPtr, Size, queueOf(*D, Async)));
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
  size_t Count = NumArgs > 0 ? static_cast<size_t>(NumArgs) : 0;
  // Most kernels take a few arguments: no allocation on the launch path.
  constexpr size_t kInlineArgs = 16;
  uint64_t Inline[kInlineArgs];
  std::vector<uint64_t> Many;
  uint64_t *Values = Inline;
  if (Count > kInlineArgs) {
    Many.resize(Count);
    Values = Many.data();
  }
  for (size_t K = 0; K < Count; ++K)
    Values[K] = reinterpret_cast<uint64_t>(Args[K]) +
                static_cast<uint64_t>(Offsets ? Offsets[K] : 0);
  return check(D, D->launch(static_cast<KernelRecord *>(Entry), Values, Count,
                            queueOf(*D, Async)));
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
  // libomptarget calls this only with a queue, which must be reset.
  AsyncQueue *Q = existingQueue(Async);
  if (Async)
    Async->Queue = nullptr;
  return check(D, D->synchronize(Q));
}

int32_t __tgt_rtl_create_event(int32_t Id, void **EventPtr) {
  DEVICE_OR_FAIL(Id);
  *EventPtr = acquireEvent();
  return OFFLOAD_SUCCESS;
}

int32_t __tgt_rtl_record_event(int32_t Id, void *EventPtr,
                               __tgt_async_info *Async) {
  DEVICE_OR_FAIL(Id);
  return check(
      D, D->recordEvent(static_cast<Event *>(EventPtr), existingQueue(Async)));
}

int32_t __tgt_rtl_wait_event(int32_t Id, void *EventPtr,
                             __tgt_async_info *Async) {
  DEVICE_OR_FAIL(Id);
  return check(
      D, D->waitEvent(static_cast<Event *>(EventPtr), existingQueue(Async)));
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
