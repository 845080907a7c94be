//===- adapter.cpp - The __tgt_rtl_* adapters' translations ---------------===//
#include "adapter.h"
#include "host_entries.h"

#include "common/log.h"

#include <cstdio>
#include <cstdlib>
#include <list>
#include <map>
#include <mutex>
#include <string>
#include <unordered_set>

namespace ompdpu::abi {

using plugin::AsyncQueue;
using plugin::DpuDevice;
using plugin::DpuPlugin;
using plugin::KernelRecord;
using plugin::LoadedEntry;

namespace {
/// The target table of a loaded image and the storage it points into.
struct ImageTable {
  std::vector<__tgt_offload_entry> Entries;
  std::list<std::string> Names;
  __tgt_target_table Table{};
};
/// What load_binary made, guarded by TablesM (load_binary is never called
/// concurrently, but devices are looked up from any thread).
struct Loads {
  /// Per device, every image loaded.
  std::map<int32_t, std::list<ImageTable>> Tables;
  /// Every image loaded through 18's load_binary (handles point into it).
  std::list<LoadedImage> Images;
  /// Their constructor and destructor kernels.
  std::unordered_set<const void *> CtorsDtors;
};
std::mutex TablesM;
/// Never destroyed (as DpuPlugin): libomp's helper threads, never joined,
/// may still use it while exit runs the destructors.
Loads &loads() {
  static Loads *L = new Loads();
  return *L;
}
} // namespace

DpuDevice *deviceOrReport(int32_t Id) {
  DpuDevice *D = DpuPlugin::get().device(Id);
  if (!D)
    log(LogLevel::Error, "invalid device id %d (%d devices)", Id,
        DpuPlugin::get().numDevices());
  return D;
}

int32_t check(const DpuDevice &D, const Status &S) {
  if (S.ok())
    return OFFLOAD_SUCCESS;
  log(LogLevel::Error, "%s: %s", D.name().c_str(), S.message().c_str());
  return OFFLOAD_FAIL;
}

__tgt_target_table *buildTable(int32_t Id,
                               const std::vector<LoadedEntry> &Loaded) {
  std::lock_guard<std::mutex> L(TablesM);
  ImageTable &IT = loads().Tables[Id].emplace_back();
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

const LoadedImage *rememberImage(int32_t Id, std::vector<LoadedEntry> Loaded) {
  std::lock_guard<std::mutex> L(TablesM);
  for (const LoadedEntry &E : Loaded) {
    const std::string &N = E.Name;
    if (E.Kernel && N.size() >= 3 && N.compare(N.size() - 3, 3, "tor") == 0)
      loads().CtorsDtors.insert(E.Kernel);
  }
  return &loads().Images.emplace_back(LoadedImage{Id, std::move(Loaded)});
}

bool isCtorOrDtor(const void *Kernel) {
  std::lock_guard<std::mutex> L(TablesM);
  return loads().CtorsDtors.count(Kernel) != 0;
}

const LoadedEntry *findEntry(const LoadedImage &I, const char *Name) {
  for (const LoadedEntry &E : I.Entries)
    if (Name && E.Name == Name)
      return &E;
  return nullptr;
}

std::vector<plugin::HostEntry> hostEntries(const __tgt_device_image &Image) {
  return hostEntries(Image.EntriesBegin, Image.EntriesEnd);
}

size_t imageSize(const __tgt_device_image &Image) {
  return static_cast<const char *>(Image.ImageEnd) -
         static_cast<const char *>(Image.ImageStart);
}

AsyncQueue *queueOf(DpuDevice &D, __tgt_async_info *Async) {
  if (!Async)
    return nullptr;
  if (!Async->Queue)
    Async->Queue = D.acquireQueue();
  return static_cast<AsyncQueue *>(Async->Queue);
}

AsyncQueue *existingQueue(__tgt_async_info *Async) {
  return Async ? static_cast<AsyncQueue *>(Async->Queue) : nullptr;
}

AsyncQueue *takeQueue(__tgt_async_info *Async) {
  AsyncQueue *Q = existingQueue(Async);
  if (Async)
    Async->Queue = nullptr;
  return Q;
}

int32_t launchWithOffsets(int32_t Id, void *Entry, void **Args,
                          const ptrdiff_t *Offsets, int32_t NumArgs,
                          __tgt_async_info *Async, size_t Leading) {
  OMPDPU_DEVICE_OR_FAIL(Id);
  size_t Given = NumArgs > 0 ? static_cast<size_t>(NumArgs) : 0;
  size_t Count = Leading + Given;
  // Most kernels take a few arguments: no allocation on the launch path.
  constexpr size_t kInlineArgs = 16;
  uint64_t Inline[kInlineArgs];
  std::vector<uint64_t> Many;
  uint64_t *Values = Inline;
  if (Count > kInlineArgs) {
    Many.resize(Count);
    Values = Many.data();
  }
  for (size_t K = 0; K < Leading; ++K)
    Values[K] = ~uint64_t(0);
  for (size_t K = 0; K < Given; ++K)
    Values[Leading + K] = reinterpret_cast<uint64_t>(Args[K]) +
                          static_cast<uint64_t>(Offsets ? Offsets[K] : 0);
  return check(*D, D->launch(static_cast<KernelRecord *>(Entry), Values, Count,
                             queueOf(*D, Async)));
}

void printLaunchInfo(int32_t Id, const void *Kernel) {
  // Read once, as LLVM's plugins do (std::stoi: decimal).
  static const long Level = [] {
    const char *V = std::getenv("LIBOMPTARGET_INFO");
    return V ? std::strtol(V, nullptr, 10) : 0L;
  }();
  constexpr long kPluginKernel = 0x10; // OMP_INFOTYPE_PLUGIN_KERNEL
  if (!(Level & kPluginKernel) || !Kernel)
    return;
  std::fprintf(stderr,
               "ompdpu device %d info: Launching kernel %s with 1 blocks and "
               "1 threads in Generic mode\n",
               Id, static_cast<const KernelRecord *>(Kernel)->Name.c_str());
}

} // namespace ompdpu::abi
