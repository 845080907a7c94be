//===- rtl.cpp - ompdpu's DPU plugin inside libomptarget 19 ---------------===//
//
// LLVM's generic plugin types (as plugins-nextgen/host uses them) over
// ompdpu's device logic (plugin-dpu/src, no LLVM type in it): every DPU
// server of the plugin's ISA is one device. Each method finds the ompdpu
// device, calls it and turns its Status into an llvm::Error.
//
//===----------------------------------------------------------------------===//
#include "dpu_plugin.h"

#include "GlobalHandler.h"
#include "PluginInterface.h"
#include "Shared/Debug.h"
#include "omptarget.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Frontend/OpenMP/OMPDeviceConstants.h"

#include <string>
#include <unordered_map>
#include <vector>

namespace llvm::omp::target::plugin {

using DpuDev = ::ompdpu::plugin::DpuDevice;
using DpuQueue = ::ompdpu::plugin::AsyncQueue;

namespace {

/// An llvm::Error for a failed ompdpu Status, naming the device.
Error check(const DpuDev &D, const ::ompdpu::Status &S) {
  if (S.ok())
    return Plugin::success();
  return Plugin::error("%s: %s", D.name().c_str(), S.message().c_str());
}

/// The ompdpu queue of an async info, made on first use (the wrapper
/// synchronizes a queue it made for a synchronous call).
DpuQueue *queueOf(DpuDev &D, AsyncInfoWrapperTy &W) {
  if (!W.hasQueue())
    W.setQueueAs<DpuQueue *>(D.acquireQueue());
  return W.getQueueAs<DpuQueue *>();
}

/// The calling thread's last DPU allocation, which libompdpu asks for
/// (__ompdpu_plugin_last_alloc) to tell DPUs among the OpenMP devices.
struct LastAllocation {
  int32_t Device = -1;
  void *Ptr = nullptr;
  uint64_t Count = 0;
};
thread_local LastAllocation LastAlloc;

/// The ELF machine the plugin serves: its first server's (one ISA per
/// process: GenericPluginTy checks images against one machine value).
uint16_t servedMachine() {
  auto &P = ::ompdpu::plugin::DpuPlugin::get();
  for (int32_t K = 0; K < P.numDevices(); ++K)
    if (!P.device(K)->placeholder())
      return P.device(K)->machine();
  return ELF::EM_AARCH64;
}

} // namespace

/// An image loaded on a DPU: its entries by name.
struct DpuImageTy : public DeviceImageTy {
  DpuImageTy(int32_t Id, GenericDeviceTy &Device,
             const __tgt_device_image *Image)
      : DeviceImageTy(Id, Device, Image) {}
  std::unordered_map<std::string, ::ompdpu::plugin::LoadedEntry> Entries;
};

/// A kernel of a loaded image, launched through the DPU's queue.
struct DpuKernelTy : public GenericKernelTy {
  DpuKernelTy(const char *Name) : GenericKernelTy(Name) {}

  Error initImpl(GenericDeviceTy &Device, DeviceImageTy &Image) override {
    auto &I = static_cast<DpuImageTy &>(Image);
    auto It = I.Entries.find(getName());
    if (It == I.Entries.end() || !It->second.Kernel)
      return Plugin::error("no kernel %s in the image", getName());
    Record = It->second.Kernel;
    KernelEnvironment.Configuration.ExecMode = OMP_TGT_EXEC_MODE_GENERIC;
    KernelEnvironment.Configuration.MayUseNestedParallelism = /*Unknown=*/2;
    KernelEnvironment.Configuration.UseGenericStateMachine = /*Unknown=*/2;
    MaxNumThreads = 1; // teams run as one team, as with the host plugin
    return Plugin::success();
  }

  Error launchImpl(GenericDeviceTy &Device, uint32_t, uint64_t,
                   KernelArgsTy &KernelArgs, KernelLaunchParamsTy Params,
                   AsyncInfoWrapperTy &W) const override;

private:
  ::ompdpu::plugin::KernelRecord *Record = nullptr;
};

/// One DPU server as a device.
struct DpuDeviceTy : public GenericDeviceTy {
  DpuDeviceTy(GenericPluginTy &Plugin, int32_t Id, int32_t NumDevices,
              DpuDev &D)
      : GenericDeviceTy(Plugin, Id, NumDevices, GridValues), Dpu(D) {}

  DpuDev &Dpu;

  // A placeholder (a server unreachable at start-up) initialises too: 19
  // numbers only the devices that do, and its number must stay taken. Its
  // image load and every later call fail, naming it.
  Error initImpl(GenericPluginTy &) override { return Plugin::success(); }
  Error deinitImpl() override { return Plugin::success(); }
  Error setContext() override { return Plugin::success(); }
  std::string getComputeUnitKind() const override {
    return "dpu-" + Dpu.info().Isa;
  }

  Expected<GenericKernelTy &> constructKernel(const char *Name) override {
    auto *K = Plugin.allocate<DpuKernelTy>();
    if (!K)
      return Plugin::error("cannot allocate kernel %s", Name);
    return *new (K) DpuKernelTy(Name);
  }

  Expected<DeviceImageTy *> loadBinaryImpl(const __tgt_device_image *TgtImage,
                                           int32_t ImageId) override {
    std::vector<::ompdpu::plugin::HostEntry> Host;
    for (auto *E = TgtImage->EntriesBegin; E != TgtImage->EntriesEnd; ++E)
      Host.push_back({E->name ? E->name : "", E->size, E->flags});
    size_t Size = static_cast<const char *>(TgtImage->ImageEnd) -
                  static_cast<const char *>(TgtImage->ImageStart);
    auto Loaded = Dpu.loadImage(TgtImage->ImageStart, Size, Host);
    if (!Loaded)
      return check(Dpu, Loaded.status());
    auto *Image = Plugin.allocate<DpuImageTy>();
    new (Image) DpuImageTy(ImageId, *this, TgtImage);
    for (auto &E : *Loaded)
      Image->Entries[E.Name] = E;
    return Image;
  }

  void *allocate(size_t Size, void *, TargetAllocTy Kind) override {
    auto P = Dpu.alloc(static_cast<int64_t>(Size), memoryKind(Kind));
    if (P) {
      LastAlloc = {DeviceId, *P, LastAlloc.Count + 1};
      return *P;
    }
    consumeError(check(Dpu, P.status()));
    return nullptr;
  }
  int free(void *Ptr, TargetAllocTy) override {
    return Dpu.free(Ptr).ok() ? OFFLOAD_SUCCESS : OFFLOAD_FAIL;
  }

  // Host memory is not pinned for a DPU: transfers go over UCX.
  Expected<void *> dataLockImpl(void *HstPtr, int64_t) override {
    return HstPtr;
  }
  Error dataUnlockImpl(void *) override { return Plugin::success(); }
  Expected<bool> isPinnedPtrImpl(void *, void *&, void *&,
                                 size_t &) const override {
    return false;
  }

  Error dataSubmitImpl(void *TgtPtr, const void *HstPtr, int64_t Size,
                       AsyncInfoWrapperTy &W) override {
    return check(Dpu, Dpu.submit(TgtPtr, HstPtr, Size, queueOf(Dpu, W)));
  }
  Error dataRetrieveImpl(void *HstPtr, const void *TgtPtr, int64_t Size,
                         AsyncInfoWrapperTy &W) override {
    return check(Dpu, Dpu.retrieve(HstPtr, TgtPtr, Size, queueOf(Dpu, W)));
  }
  Error dataExchangeImpl(const void *SrcPtr, GenericDeviceTy &Dst, void *DstPtr,
                         int64_t Size, AsyncInfoWrapperTy &W) override {
    auto &To = static_cast<DpuDeviceTy &>(Dst).Dpu;
    return check(Dpu, Dpu.exchange(SrcPtr, To, DstPtr, Size, queueOf(Dpu, W)));
  }

  Error synchronizeImpl(__tgt_async_info &AsyncInfo) override {
    // The queue goes back to the device; the async info must forget it.
    auto *Q = static_cast<DpuQueue *>(AsyncInfo.Queue);
    AsyncInfo.Queue = nullptr;
    return check(Dpu, Dpu.synchronize(Q));
  }
  // Operations are not polled one by one: querying waits for the queue.
  Error queryAsyncImpl(__tgt_async_info &AsyncInfo) override {
    return synchronizeImpl(AsyncInfo);
  }

  Error initAsyncInfoImpl(AsyncInfoWrapperTy &W) override {
    queueOf(Dpu, W);
    return Plugin::success();
  }
  Error initDeviceInfoImpl(__tgt_device_info *) override {
    return Plugin::error("device info (interop) is not supported by DPUs");
  }

  Error createEventImpl(void **EventPtrStorage) override {
    *EventPtrStorage = ::ompdpu::plugin::acquireEvent();
    return Plugin::success();
  }
  Error destroyEventImpl(void *E) override {
    ::ompdpu::plugin::releaseEvent(static_cast<::ompdpu::plugin::Event *>(E));
    return Plugin::success();
  }
  Error recordEventImpl(void *E, AsyncInfoWrapperTy &W) override {
    return check(Dpu, Dpu.recordEvent(static_cast<::ompdpu::plugin::Event *>(E),
                                      W.getQueueAs<DpuQueue *>()));
  }
  Error waitEventImpl(void *E, AsyncInfoWrapperTy &W) override {
    return check(Dpu, Dpu.waitEvent(static_cast<::ompdpu::plugin::Event *>(E),
                                    W.getQueueAs<DpuQueue *>()));
  }
  Error syncEventImpl(void *E) override {
    return check(
        Dpu, Dpu.waitEvent(static_cast<::ompdpu::plugin::Event *>(E), nullptr));
  }

  Error obtainInfoImpl(InfoQueueTy &Info) override {
    const auto &I = Dpu.info();
    Info.add("Device Type", "DPU (ompdpu-server)");
    Info.add("Server", Dpu.name());
    Info.add("ISA", I.Isa);
    Info.add("Cores", I.Cores);
    Info.add("Memory", I.Memory, "bytes");
    return Plugin::success();
  }

  // No device environment, memory pool, stack or heap to set up.
  bool shouldSetupDeviceEnvironment() const override { return false; }
  bool shouldSetupDeviceMemoryPool() const override { return false; }
  Error getDeviceStackSize(uint64_t &V) override {
    V = 0;
    return Plugin::success();
  }
  Error setDeviceStackSize(uint64_t) override { return Plugin::success(); }
  Error getDeviceHeapSize(uint64_t &V) override {
    V = 0;
    return Plugin::success();
  }
  Error setDeviceHeapSize(uint64_t) override { return Plugin::success(); }

private:
  static ::ompdpu::plugin::MemoryKind memoryKind(TargetAllocTy Kind) {
    using ::ompdpu::plugin::MemoryKind;
    switch (Kind) {
    case TARGET_ALLOC_HOST:
      return MemoryKind::Host;
    case TARGET_ALLOC_SHARED:
      return MemoryKind::Shared;
    case TARGET_ALLOC_DEVICE:
      return MemoryKind::Device;
    default:
      return MemoryKind::Default;
    }
  }
  static constexpr GV GridValues = {1, 1, 1, 1, 1, 1, 1};
};

Error DpuKernelTy::launchImpl(GenericDeviceTy &Device, uint32_t, uint64_t,
                              KernelArgsTy &KernelArgs,
                              KernelLaunchParamsTy Params,
                              AsyncInfoWrapperTy &W) const {
  // Params.Data: the arguments' values, the implicit launch environment
  // first (LLVM's "none", ~0, unless a teams reduction needs one).
  auto &D = static_cast<DpuDeviceTy &>(Device).Dpu;
  const auto *Args = static_cast<const uint64_t *>(Params.Data);
  return check(D, D.launch(Record, Args, KernelArgs.NumArgs, queueOf(D, W)));
}

/// Globals are found by name in the loaded image's entries.
struct DpuGlobalHandlerTy final : public GenericGlobalHandlerTy {
  Error getGlobalMetadataFromDevice(GenericDeviceTy &, DeviceImageTy &Image,
                                    GlobalTy &Global) override {
    auto &I = static_cast<DpuImageTy &>(Image);
    auto It = I.Entries.find(Global.getName());
    if (It == I.Entries.end() || It->second.Kernel)
      return Plugin::error("no global %s in the image",
                           Global.getName().c_str());
    Global.setPtr(reinterpret_cast<void *>(It->second.Address));
    return Plugin::success();
  }
};

/// The DPU servers of one ISA (the first server's).
struct DpuPluginTy final : public GenericPluginTy {
  // The servers' ISA is known once connected (getTripleArch, for JIT only).
  DpuPluginTy() : GenericPluginTy(Triple::UnknownArch) {}

  Expected<int32_t> initImpl() override {
    auto &P = ::ompdpu::plugin::DpuPlugin::get();
    uint16_t Machine = servedMachine();
    for (int32_t K = 0; K < P.numDevices(); ++K)
      if (P.device(K)->placeholder() || P.device(K)->machine() == Machine)
        Served.push_back(P.device(K));
    return static_cast<int32_t>(Served.size());
  }
  Error deinitImpl() override {
    ::ompdpu::plugin::DpuPlugin::get().shutdown();
    return Plugin::success();
  }

  GenericDeviceTy *createDevice(GenericPluginTy &Plugin, int32_t Id,
                                int32_t NumDevices) override {
    return new DpuDeviceTy(Plugin, Id, NumDevices, *Served[Id]);
  }
  GenericGlobalHandlerTy *createGlobalHandler() override {
    return new DpuGlobalHandlerTy();
  }
  uint16_t getMagicElfBits() const override { return servedMachine(); }
  Triple::ArchType getTripleArch() const override {
    return servedMachine() == ELF::EM_X86_64 ? Triple::x86_64 : Triple::aarch64;
  }
  const char *getName() const override { return GETNAME(TARGET_NAME); }

  // Servers copy between each other (peer links).
  bool isDataExchangable(int32_t, int32_t) override { return true; }
  Expected<bool> isELFCompatible(uint32_t, StringRef) const override {
    return true;
  }

private:
  std::vector<DpuDev *> Served;
};

} // namespace llvm::omp::target::plugin

extern "C" {
llvm::omp::target::plugin::GenericPluginTy *createPlugin_dpu() {
  return new llvm::omp::target::plugin::DpuPluginTy();
}

// ompdpu's own queries, exported by libomptarget (0001-*.patch) for
// libompdpu: the calling thread's last DPU allocation, the number of DPUs.
__attribute__((visibility("default"))) int32_t
__ompdpu_plugin_last_alloc(int32_t *Id, void **Ptr, uint64_t *Count) {
  const auto &A = llvm::omp::target::plugin::LastAlloc;
  *Id = A.Device;
  *Ptr = A.Ptr;
  *Count = A.Count;
  return A.Device >= 0;
}
__attribute__((visibility("default"))) int32_t __ompdpu_plugin_num_devices() {
  return ::ompdpu::plugin::DpuPlugin::get().numDevices();
}
}
