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
#include <string>
#include <vector>

namespace {

using LastAllocFn = int32_t (*)(int32_t *, void **, uint64_t *);
using NumDevicesFn = int (*)();
using DeviceAddressFn = int32_t (*)(int32_t, char *, uint64_t);
using TargetAllocFn = void *(*)(size_t, int);
using TargetFreeFn = void (*)(void *, int);

/// One of ompdpu's plugin copies: its queries.
struct PluginQueries {
  LastAllocFn LastAlloc;
  NumDevicesFn NumDevices;
  DeviceAddressFn DeviceAddress; ///< absent from plugins older than it
};

/// A DPU among the OpenMP devices: its number and its server.
struct Dpu {
  int Device;
  std::string Address;
};

std::vector<PluginQueries> loadedPlugins() {
  std::vector<PluginQueries> Plugins;
  auto Add = [&](void *H) {
    auto F =
        reinterpret_cast<LastAllocFn>(dlsym(H, "__ompdpu_plugin_last_alloc"));
    auto N =
        reinterpret_cast<NumDevicesFn>(dlsym(H, "__ompdpu_plugin_num_devices"));
    if (F && N &&
        std::none_of(Plugins.begin(), Plugins.end(),
                     [&](const PluginQueries &P) { return P.LastAlloc == F; }))
      Plugins.push_back({F, N,
                         reinterpret_cast<DeviceAddressFn>(
                             dlsym(H, "__ompdpu_plugin_device_address"))});
  };
  // Where the plugin is part of libomptarget itself (LLVM 19 and later
  // link plugins in) its queries are in the global scope.
  Add(RTLD_DEFAULT);
  // Drop-in plugins are loaded with local scope: ask each by name (LLVM
  // 18 loads the aarch64 one under the CUDA plugin's name).
  for (const char *Name :
       {"libomptarget.rtl.x86_64.so", "libomptarget.rtl.aarch64.so",
        "libomptarget.rtl.x86_64.nextgen.so",
        "libomptarget.rtl.aarch64.nextgen.so", "libomptarget.rtl.cuda.so"}) {
    // RTLD_NOLOAD: only plugins libomptarget already loaded count.
    if (void *H = dlopen(Name, RTLD_NOW | RTLD_NOLOAD)) {
      Add(H);
      dlclose(H); // drops only the reference NOLOAD added
    }
  }
  return Plugins;
}

/// Device L of plugin P's server address ("" if it cannot say).
std::string addressOf(const PluginQueries &P, int L) {
  char Buf[300] = "";
  if (!P.DeviceAddress || !P.DeviceAddress(L, Buf, sizeof(Buf)))
    return "";
  return Buf;
}

std::vector<Dpu> findDpus() {
  std::vector<PluginQueries> Plugins = loadedPlugins();
  auto NumDevices = reinterpret_cast<NumDevicesFn>(
      dlsym(RTLD_DEFAULT, "omp_get_num_devices"));
  auto Alloc =
      reinterpret_cast<TargetAllocFn>(dlsym(RTLD_DEFAULT, "omp_target_alloc"));
  auto Free =
      reinterpret_cast<TargetFreeFn>(dlsym(RTLD_DEFAULT, "omp_target_free"));
  std::vector<Dpu> Dpus;
  if (Plugins.empty() || !NumDevices || !Alloc || !Free)
    return Dpus;
  int N = NumDevices();
  for (int Dev = 0; Dev < N; ++Dev) {
    if (std::any_of(Dpus.begin(), Dpus.end(),
                    [&](const Dpu &D) { return D.Device == Dev; }))
      continue;
    // A DPU allocation bumps its plugin's per-thread count and is the
    // pointer omp_target_alloc returned.
    std::vector<uint64_t> Before(Plugins.size());
    for (size_t K = 0; K < Plugins.size(); ++K) {
      int32_t Id;
      void *Ptr;
      Plugins[K].LastAlloc(&Id, &Ptr, &Before[K]);
    }
    void *P = Alloc(1, Dev);
    if (!P)
      continue; // not a DPU, or one that did not answer (found below)
    for (size_t K = 0; K < Plugins.size(); ++K) {
      int32_t Id = -1;
      void *Ptr = nullptr;
      uint64_t Count = 0;
      if (Plugins[K].LastAlloc(&Id, &Ptr, &Count) && Count != Before[K] &&
          Ptr == P) {
        // libomptarget numbers a plugin's devices consecutively: all of
        // them are DPUs, those unreachable since start-up too.
        for (int L = 0; L < Plugins[K].NumDevices(); ++L)
          if (Dev - Id + L >= 0 && Dev - Id + L < N)
            Dpus.push_back({Dev - Id + L, addressOf(Plugins[K], L)});
        break;
      }
    }
    Free(P, Dev);
  }
  auto ByDevice = [](const Dpu &A, const Dpu &B) {
    return A.Device < B.Device;
  };
  std::sort(Dpus.begin(), Dpus.end(), ByDevice);
  Dpus.erase(std::unique(Dpus.begin(), Dpus.end(),
                         [](const Dpu &A, const Dpu &B) {
                           return A.Device == B.Device;
                         }),
             Dpus.end());
  return Dpus;
}

const std::vector<Dpu> &dpus() {
  static std::once_flag Once;
  static std::vector<Dpu> D;
  std::call_once(Once, [] { D = findDpus(); });
  return D;
}

} // namespace

extern "C" int ompdpu_num_devices(void) {
  return static_cast<int>(dpus().size());
}

extern "C" int ompdpu_device(int K) {
  const std::vector<Dpu> &D = dpus();
  return K >= 0 && K < static_cast<int>(D.size()) ? D[K].Device : -1;
}

extern "C" int ompdpu_is_dpu(int Dev) {
  for (const Dpu &D : dpus())
    if (D.Device == Dev)
      return 1;
  return 0;
}

extern "C" const char *ompdpu_device_address(int K) {
  const std::vector<Dpu> &D = dpus();
  if (K < 0 || K >= static_cast<int>(D.size()) || D[K].Address.empty())
    return nullptr;
  return D[K].Address.c_str();
}
