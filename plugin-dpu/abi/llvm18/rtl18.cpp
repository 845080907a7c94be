//===- rtl18.cpp - Entry points of libomptarget 18 ------------------------===//
//
// What 18 changed from 16/17 (whose launch_kernel and data_delete it keeps,
// abi/llvm16/): load_binary hands back a handle, and libomptarget asks for
// each entry's device address with get_function and get_global.
//
//===----------------------------------------------------------------------===//
#include "adapter.h"
#include "common/log.h"
#include "omptarget_abi18.h"

using namespace ompdpu;
using namespace ompdpu::abi;
using namespace ompdpu::plugin;

namespace {
/// The kernel (or global) Name of the image a handle names, or null after
/// saying why.
const LoadedEntry *entryOrReport(__tgt_device_binary Binary, const char *Name,
                                 bool Kernel) {
  const auto *I = reinterpret_cast<const LoadedImage *>(Binary.handle);
  DpuDevice *D = I ? deviceOrReport(I->Device) : nullptr;
  if (!D)
    return nullptr;
  const LoadedEntry *E = findEntry(*I, Name);
  if (E && (E->Kernel != nullptr) == Kernel)
    return E;
  check(*D,
        Status::error(ErrorCode::NotFound, format("the image has no %s '%s'",
                                                  Kernel ? "kernel" : "global",
                                                  Name ? Name : "(null)")));
  return nullptr;
}
} // namespace

extern "C" {
#pragma GCC visibility push(default)

int32_t __tgt_rtl_load_binary(int32_t Id, __tgt_device_image *Image,
                              __tgt_device_binary *Binary) {
  OMPDPU_DEVICE_OR_FAIL(Id);
  auto Loaded =
      D->loadImage(Image->ImageStart, imageSize(*Image), hostEntries(*Image));
  if (!Loaded)
    return check(*D, Loaded.status());
  Binary->handle =
      reinterpret_cast<uintptr_t>(rememberImage(Id, std::move(*Loaded)));
  return OFFLOAD_SUCCESS;
}

int32_t __tgt_rtl_get_function(__tgt_device_binary Binary, const char *Name,
                               void **DevicePtr) {
  const LoadedEntry *E = entryOrReport(Binary, Name, /*Kernel=*/true);
  if (!E)
    return OFFLOAD_FAIL;
  *DevicePtr = E->Kernel;
  return OFFLOAD_SUCCESS;
}

int32_t __tgt_rtl_get_global(__tgt_device_binary Binary, uint64_t Size,
                             const char *Name, void **DevicePtr) {
  const LoadedEntry *E = entryOrReport(Binary, Name, /*Kernel=*/false);
  if (!E)
    return OFFLOAD_FAIL;
  // loadImage checked each global's size against the host's entry.
  (void)Size;
  *DevicePtr = reinterpret_cast<void *>(E->Address);
  return OFFLOAD_SUCCESS;
}

#pragma GCC visibility pop
} // extern "C"
