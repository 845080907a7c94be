//===- ompdpu.cpp - Map OpenMP device numbers to DPUs ---------------------===//
//
// libomptarget numbers devices across all plugins in an order it decides
// (by plugin and by image), and it never tells a plugin the global number of
// its devices. So ompdpu_device() asks: it allocates one byte on each OpenMP
// device and checks whether one of ompdpu's plugin copies made that
// allocation (the plugin remembers each thread's last allocation).
//
//===----------------------------------------------------------------------===//
#include "ompdpu.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <dlfcn.h>
#include <mutex>
#include <vector>

namespace {

using LastAllocFn = int32_t (*)(int32_t *, void **, uint64_t *);
using NumDevicesFn = int (*)();
using TargetAllocFn = void *(*)(size_t, int);
using TargetFreeFn = void (*)(void *, int);

std::vector<int> findDpus() {
  std::vector<LastAllocFn> Plugins;
  // Where the plugin is part of libomptarget itself (LLVM 19 and later
  // link plugins in) its query is in the global scope.
  if (auto F = reinterpret_cast<LastAllocFn>(
          dlsym(RTLD_DEFAULT, "__ompdpu_plugin_last_alloc")))
    Plugins.push_back(F);
  // Drop-in plugins are loaded with local scope: ask each by name.
  for (const char *Name :
       {"libomptarget.rtl.x86_64.so", "libomptarget.rtl.aarch64.so",
        "libomptarget.rtl.x86_64.nextgen.so",
        "libomptarget.rtl.aarch64.nextgen.so"}) {
    // RTLD_NOLOAD: only plugins libomptarget already loaded count.
    void *H = dlopen(Name, RTLD_NOW | RTLD_NOLOAD);
    if (!H)
      continue;
    auto F =
        reinterpret_cast<LastAllocFn>(dlsym(H, "__ompdpu_plugin_last_alloc"));
    if (F && std::find(Plugins.begin(), Plugins.end(), F) == Plugins.end())
      Plugins.push_back(F);
    dlclose(H); // drops only the reference NOLOAD added
  }
  auto NumDevices = reinterpret_cast<NumDevicesFn>(
      dlsym(RTLD_DEFAULT, "omp_get_num_devices"));
  auto Alloc =
      reinterpret_cast<TargetAllocFn>(dlsym(RTLD_DEFAULT, "omp_target_alloc"));
  auto Free =
      reinterpret_cast<TargetFreeFn>(dlsym(RTLD_DEFAULT, "omp_target_free"));
  std::vector<int> Dpus;
  if (Plugins.empty() || !NumDevices || !Alloc || !Free)
    return Dpus;
  int N = NumDevices();
  for (int Dev = 0; Dev < N; ++Dev) {
    // A DPU allocation bumps its plugin's per-thread count and is the
    // pointer omp_target_alloc returned.
    std::vector<uint64_t> Before(Plugins.size());
    for (size_t K = 0; K < Plugins.size(); ++K) {
      int32_t Id;
      void *Ptr;
      Plugins[K](&Id, &Ptr, &Before[K]);
    }
    void *P = Alloc(1, Dev);
    if (!P)
      continue;
    for (size_t K = 0; K < Plugins.size(); ++K) {
      int32_t Id = -1;
      void *Ptr = nullptr;
      uint64_t Count = 0;
      if (Plugins[K](&Id, &Ptr, &Count) && Count != Before[K] && Ptr == P) {
        Dpus.push_back(Dev);
        break;
      }
    }
    Free(P, Dev);
  }
  return Dpus;
}

const std::vector<int> &dpus() {
  static std::once_flag Once;
  static std::vector<int> D;
  std::call_once(Once, [] { D = findDpus(); });
  return D;
}

} // namespace

extern "C" int ompdpu_num_devices(void) {
  return static_cast<int>(dpus().size());
}

extern "C" int ompdpu_device(int K) {
  const std::vector<int> &D = dpus();
  return K >= 0 && K < static_cast<int>(D.size()) ? D[K] : -1;
}

extern "C" int ompdpu_is_dpu(int Dev) {
  for (int D : dpus())
    if (D == Dev)
      return 1;
  return 0;
}
