//===- dpu_nextgen.h - ompdpu's plugin inside libomptarget 19+ --*- C++ -*-===//
//
// LLVM's generic plugin types (GenericPluginTy, GenericDeviceTy,
// GenericKernelTy, as plugins-nextgen/host uses them) over ompdpu's device
// logic (plugin-dpu/src, no LLVM type in it): every DPU server of the
// plugin's ISA is one device. This is what every LLVM version with linked-in
// plugins shares; what one version changed (a method's signature, how it
// makes an error, how it passes kernel arguments and image entries) is in
// that version's file, llvm<N>.cpp, which defines the final DpuKernelTy and
// DpuDeviceTy and createPlugin_dpu(). Compiled inside LLVM's offload/ tree
// (llvm-patches/libomptarget-<N>/plugins-nextgen/dpu/CMakeLists.txt).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "dpu_plugin.h"

#include "GlobalHandler.h"
#include "PluginInterface.h"

#include <string>
#include <unordered_map>

namespace llvm::omp::target::plugin {

using DpuDev = ::ompdpu::plugin::DpuDevice;
using DpuQueue = ::ompdpu::plugin::AsyncQueue;

/// An llvm::Error saying Message (version file: Plugin::error's form).
Error dpuError(const std::string &Message);
/// An llvm::Error for a failed ompdpu Status, naming the device.
Error dpuCheck(const DpuDev &D, const ::ompdpu::Status &S);
/// The ompdpu queue of an async info, made on first use (the wrapper
/// synchronizes a queue it made for a synchronous call).
DpuQueue *dpuQueue(DpuDev &D, AsyncInfoWrapperTy &W);

/// An image loaded on a DPU: its entries by name.
struct DpuImageTy : public DeviceImageTy {
  using DeviceImageTy::DeviceImageTy;
  std::unordered_map<std::string, ::ompdpu::plugin::LoadedEntry> Entries;
};

/// A kernel of a loaded image; the version file launches it.
struct DpuKernelBase : public GenericKernelTy {
  using GenericKernelTy::GenericKernelTy;
  Error initImpl(GenericDeviceTy &Device, DeviceImageTy &Image) override;

protected:
  ::ompdpu::plugin::KernelRecord *Record = nullptr;
};

/// One DPU server as a device: the methods whose signatures every version
/// shares; the version file adds the others.
struct DpuDeviceBase : public GenericDeviceTy {
  DpuDeviceBase(GenericPluginTy &Plugin, int32_t Id, int32_t NumDevices,
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

  void *allocate(size_t Size, void *, TargetAllocTy Kind) override;
  int free(void *Ptr, TargetAllocTy) override;

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
                       AsyncInfoWrapperTy &W) override;
  Error dataRetrieveImpl(void *HstPtr, const void *TgtPtr, int64_t Size,
                         AsyncInfoWrapperTy &W) override;
  Error dataExchangeImpl(const void *SrcPtr, GenericDeviceTy &Dst, void *DstPtr,
                         int64_t Size, AsyncInfoWrapperTy &W) override;

  // Operations are not polled one by one: querying waits for the queue.
  Error queryAsyncImpl(__tgt_async_info &AsyncInfo) override {
    return synchronizeQueue(AsyncInfo);
  }
  Error initAsyncInfoImpl(AsyncInfoWrapperTy &W) override;
  Error initDeviceInfoImpl(__tgt_device_info *) override {
    return dpuError("device info (interop) is not supported by DPUs");
  }

  Error createEventImpl(void **EventPtrStorage) override;
  Error destroyEventImpl(void *E) override;
  Error recordEventImpl(void *E, AsyncInfoWrapperTy &W) override;
  Error waitEventImpl(void *E, AsyncInfoWrapperTy &W) override;
  Error syncEventImpl(void *E) override;

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

protected:
  /// Load an image's ELF bytes whose host copy has these entries into a new
  /// DpuImageTy made from Args (the version's DeviceImageTy arguments).
  template <typename... ImageArgs>
  Expected<DeviceImageTy *>
  loadDpuImage(const void *Start, size_t Size,
               const std::vector<::ompdpu::plugin::HostEntry> &Host,
               ImageArgs &&...Args) {
    auto Loaded = Dpu.loadImage(Start, Size, Host);
    if (!Loaded)
      return dpuCheck(Dpu, Loaded.status());
    auto *Image = Plugin.allocate<DpuImageTy>();
    new (Image) DpuImageTy(std::forward<ImageArgs>(Args)...);
    for (auto &E : *Loaded)
      Image->Entries[E.Name] = E;
    return Image;
  }
  /// Wait for the async info's queue and give it back to the device.
  Error synchronizeQueue(__tgt_async_info &AsyncInfo);

private:
  static constexpr GV GridValues = {1, 1, 1, 1, 1, 1, 1};
};

/// Made by the version file: its DpuDeviceTy over device D.
GenericDeviceTy *newDpuDevice(GenericPluginTy &Plugin, int32_t Id,
                              int32_t NumDevices, DpuDev &D);

/// Globals are found by name in the loaded image's entries.
struct DpuGlobalHandlerTy final : public GenericGlobalHandlerTy {
  Error getGlobalMetadataFromDevice(GenericDeviceTy &, DeviceImageTy &Image,
                                    GlobalTy &Global) override;
};

/// The DPU servers of one ISA (the first server's: GenericPluginTy checks
/// images against one ELF machine value).
struct DpuPluginTy final : public GenericPluginTy {
  // The servers' ISA is known once connected (getTripleArch, for JIT only).
  DpuPluginTy() : GenericPluginTy(Triple::UnknownArch) {}

  Expected<int32_t> initImpl() override;
  Error deinitImpl() override;
  GenericDeviceTy *createDevice(GenericPluginTy &Plugin, int32_t Id,
                                int32_t NumDevices) override;
  GenericGlobalHandlerTy *createGlobalHandler() override {
    return new DpuGlobalHandlerTy();
  }
  uint16_t getMagicElfBits() const override;
  Triple::ArchType getTripleArch() const override;
  const char *getName() const override { return GETNAME(TARGET_NAME); }

  // Servers copy between each other (peer links).
  bool isDataExchangable(int32_t, int32_t) override { return true; }
  Expected<bool> isELFCompatible(uint32_t, StringRef) const override {
    return true;
  }
};

} // namespace llvm::omp::target::plugin
