//===- llvm19.cpp - What libomptarget 19's plugin interface asks ----------===//
//
// Everything of the in-tree plugin that is particular to LLVM 19's
// PluginInterface.h: how it makes an error, the signatures of loadBinaryImpl
// (the image with its host entries), launchImpl (the arguments' values,
// the implicit launch environment first), synchronizeImpl and
// obtainInfoImpl, and the plugin's factory. Another LLVM version gets a file
// like this one (llvm<N>.cpp); dpu_nextgen.h/.cpp are shared.
//
//===----------------------------------------------------------------------===//
#include "dpu_nextgen.h"

#include "host_entries.h"

namespace llvm::omp::target::plugin {

Error dpuError(const std::string &Message) {
  return Plugin::error("%s", Message.c_str());
}

namespace {

/// A kernel of a loaded image, launched through the DPU's queue.
struct DpuKernelTy final : public DpuKernelBase {
  using DpuKernelBase::DpuKernelBase;

  // Params.Data: the arguments' values, the implicit launch environment
  // first (LLVM's "none", ~0, unless a teams reduction needs one).
  Error launchImpl(GenericDeviceTy &Device, uint32_t, uint64_t,
                   KernelArgsTy &KernelArgs, KernelLaunchParamsTy Params,
                   AsyncInfoWrapperTy &W) const override {
    auto &D = static_cast<DpuDeviceBase &>(Device).Dpu;
    const auto *Args = static_cast<const uint64_t *>(Params.Data);
    return dpuCheck(D,
                    D.launch(Record, Args, KernelArgs.NumArgs, dpuQueue(D, W)));
  }
};

/// One DPU server as a device.
struct DpuDeviceTy final : public DpuDeviceBase {
  using DpuDeviceBase::DpuDeviceBase;

  Expected<GenericKernelTy &> constructKernel(const char *Name) override {
    auto *K = Plugin.allocate<DpuKernelTy>();
    if (!K)
      return dpuError(std::string("cannot allocate kernel ") + Name);
    return *new (K) DpuKernelTy(Name);
  }

  Expected<DeviceImageTy *> loadBinaryImpl(const __tgt_device_image *TgtImage,
                                           int32_t ImageId) override {
    size_t Size = static_cast<const char *>(TgtImage->ImageEnd) -
                  static_cast<const char *>(TgtImage->ImageStart);
    return loadDpuImage(TgtImage->ImageStart, Size,
                        ::ompdpu::abi::hostEntries(TgtImage->EntriesBegin,
                                                   TgtImage->EntriesEnd),
                        ImageId, *this, TgtImage);
  }

  Error synchronizeImpl(__tgt_async_info &AsyncInfo) override {
    return synchronizeQueue(AsyncInfo);
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
};

} // namespace

GenericDeviceTy *newDpuDevice(GenericPluginTy &Plugin, int32_t Id,
                              int32_t NumDevices, DpuDev &D) {
  return new DpuDeviceTy(Plugin, Id, NumDevices, D);
}

} // namespace llvm::omp::target::plugin

extern "C" llvm::omp::target::plugin::GenericPluginTy *createPlugin_dpu() {
  return new llvm::omp::target::plugin::DpuPluginTy();
}
