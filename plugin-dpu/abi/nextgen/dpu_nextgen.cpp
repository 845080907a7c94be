//===- dpu_nextgen.cpp - ompdpu's plugin inside libomptarget 19+ ----------===//
//
// The methods every LLVM version with linked-in plugins shares: each finds
// the ompdpu device, calls it and turns its Status into an llvm::Error.
//
//===----------------------------------------------------------------------===//
#include "dpu_nextgen.h"

#include "memory_kind.h"
#include "queries.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Frontend/OpenMP/OMPDeviceConstants.h"

#include <vector>

namespace llvm::omp::target::plugin {

using ::ompdpu::plugin::DpuPlugin;
using ::ompdpu::plugin::Event;

namespace {
/// The devices this plugin serves, in its numbering (set by initImpl).
std::vector<DpuDev *> &served() {
  static std::vector<DpuDev *> S;
  return S;
}

/// The ELF machine the plugin serves: its first server's.
uint16_t servedMachine() {
  auto &P = DpuPlugin::get();
  for (int32_t K = 0; K < P.numDevices(); ++K)
    if (!P.device(K)->placeholder())
      return P.device(K)->machine();
  return ELF::EM_AARCH64;
}
} // namespace

Error dpuCheck(const DpuDev &D, const ::ompdpu::Status &S) {
  if (S.ok())
    return Plugin::success();
  return dpuError(D.name() + ": " + S.message());
}

DpuQueue *dpuQueue(DpuDev &D, AsyncInfoWrapperTy &W) {
  if (!W.hasQueue())
    W.setQueueAs<DpuQueue *>(D.acquireQueue());
  return W.getQueueAs<DpuQueue *>();
}

Error DpuKernelBase::initImpl(GenericDeviceTy &, DeviceImageTy &Image) {
  auto &I = static_cast<DpuImageTy &>(Image);
  auto It = I.Entries.find(getName());
  if (It == I.Entries.end() || !It->second.Kernel)
    return dpuError(std::string("no kernel ") + getName() + " in the image");
  Record = It->second.Kernel;
  KernelEnvironment.Configuration.ExecMode = OMP_TGT_EXEC_MODE_GENERIC;
  KernelEnvironment.Configuration.MayUseNestedParallelism = /*Unknown=*/2;
  KernelEnvironment.Configuration.UseGenericStateMachine = /*Unknown=*/2;
  MaxNumThreads = 1; // teams run as one team, as with the host plugin
  return Plugin::success();
}

void *DpuDeviceBase::allocate(size_t Size, void *, TargetAllocTy Kind) {
  auto P =
      Dpu.alloc(static_cast<int64_t>(Size), ::ompdpu::abi::memoryKind(Kind));
  if (P) {
    ::ompdpu::abi::noteAllocation(DeviceId, *P);
    return *P;
  }
  consumeError(dpuCheck(Dpu, P.status()));
  return nullptr;
}

int DpuDeviceBase::free(void *Ptr, TargetAllocTy) {
  return Dpu.free(Ptr).ok() ? OFFLOAD_SUCCESS : OFFLOAD_FAIL;
}

Error DpuDeviceBase::dataSubmitImpl(void *TgtPtr, const void *HstPtr,
                                    int64_t Size, AsyncInfoWrapperTy &W) {
  return dpuCheck(Dpu, Dpu.submit(TgtPtr, HstPtr, Size, dpuQueue(Dpu, W)));
}

Error DpuDeviceBase::dataRetrieveImpl(void *HstPtr, const void *TgtPtr,
                                      int64_t Size, AsyncInfoWrapperTy &W) {
  return dpuCheck(Dpu, Dpu.retrieve(HstPtr, TgtPtr, Size, dpuQueue(Dpu, W)));
}

Error DpuDeviceBase::dataExchangeImpl(const void *SrcPtr, GenericDeviceTy &Dst,
                                      void *DstPtr, int64_t Size,
                                      AsyncInfoWrapperTy &W) {
  auto &To = static_cast<DpuDeviceBase &>(Dst).Dpu;
  return dpuCheck(Dpu,
                  Dpu.exchange(SrcPtr, To, DstPtr, Size, dpuQueue(Dpu, W)));
}

Error DpuDeviceBase::synchronizeQueue(__tgt_async_info &AsyncInfo) {
  // The queue goes back to the device; the async info must forget it.
  auto *Q = static_cast<DpuQueue *>(AsyncInfo.Queue);
  AsyncInfo.Queue = nullptr;
  return dpuCheck(Dpu, Dpu.synchronize(Q));
}

Error DpuDeviceBase::initAsyncInfoImpl(AsyncInfoWrapperTy &W) {
  dpuQueue(Dpu, W);
  return Plugin::success();
}

Error DpuDeviceBase::createEventImpl(void **EventPtrStorage) {
  *EventPtrStorage = ::ompdpu::plugin::acquireEvent();
  return Plugin::success();
}

Error DpuDeviceBase::destroyEventImpl(void *E) {
  ::ompdpu::plugin::releaseEvent(static_cast<Event *>(E));
  return Plugin::success();
}

Error DpuDeviceBase::recordEventImpl(void *E, AsyncInfoWrapperTy &W) {
  return dpuCheck(Dpu, Dpu.recordEvent(static_cast<Event *>(E),
                                       W.getQueueAs<DpuQueue *>()));
}

Error DpuDeviceBase::waitEventImpl(void *E, AsyncInfoWrapperTy &W) {
  return dpuCheck(
      Dpu, Dpu.waitEvent(static_cast<Event *>(E), W.getQueueAs<DpuQueue *>()));
}

Error DpuDeviceBase::syncEventImpl(void *E) {
  return dpuCheck(Dpu, Dpu.waitEvent(static_cast<Event *>(E), nullptr));
}

Error DpuGlobalHandlerTy::getGlobalMetadataFromDevice(GenericDeviceTy &,
                                                      DeviceImageTy &Image,
                                                      GlobalTy &Global) {
  auto &I = static_cast<DpuImageTy &>(Image);
  std::string Name(Global.getName());
  auto It = I.Entries.find(Name);
  if (It == I.Entries.end() || It->second.Kernel)
    return dpuError("no global " + Name + " in the image");
  Global.setPtr(reinterpret_cast<void *>(It->second.Address));
  return Plugin::success();
}

Expected<int32_t> DpuPluginTy::initImpl() {
  auto &P = DpuPlugin::get();
  uint16_t Machine = servedMachine();
  for (int32_t K = 0; K < P.numDevices(); ++K)
    if (P.device(K)->placeholder() || P.device(K)->machine() == Machine)
      served().push_back(P.device(K));
  // libompdpu's queries answer in this plugin's numbering.
  ::ompdpu::abi::useDeviceNumbering(
      {[] { return static_cast<int32_t>(served().size()); },
       [](int32_t Id) -> DpuDev * {
         return Id >= 0 && Id < static_cast<int32_t>(served().size())
                    ? served()[Id]
                    : nullptr;
       }});
  return static_cast<int32_t>(served().size());
}

Error DpuPluginTy::deinitImpl() {
  served().clear();
  DpuPlugin::get().shutdown();
  return Plugin::success();
}

GenericDeviceTy *DpuPluginTy::createDevice(GenericPluginTy &Plugin, int32_t Id,
                                           int32_t NumDevices) {
  return newDpuDevice(Plugin, Id, NumDevices, *served()[Id]);
}

uint16_t DpuPluginTy::getMagicElfBits() const { return servedMachine(); }

Triple::ArchType DpuPluginTy::getTripleArch() const {
  return servedMachine() == ELF::EM_X86_64 ? Triple::x86_64 : Triple::aarch64;
}

} // namespace llvm::omp::target::plugin
