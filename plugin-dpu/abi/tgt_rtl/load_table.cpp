//===- load_table.cpp - load_binary of libomptarget 14-17 -----------------===//
//
// Up to 17, load_binary returns the image's target table (18 asks for each
// entry with get_function and get_global instead: abi/llvm18/).
//
//===----------------------------------------------------------------------===//
#include "adapter.h"

using namespace ompdpu::abi;
using namespace ompdpu::plugin;

extern "C" {
#pragma GCC visibility push(default)

__tgt_target_table *__tgt_rtl_load_binary(int32_t Id,
                                          __tgt_device_image *Image) {
  DpuDevice *D = deviceOrReport(Id);
  if (!D)
    return nullptr;
  auto Loaded =
      D->loadImage(Image->ImageStart, imageSize(*Image), hostEntries(*Image));
  if (!Loaded) {
    check(*D, Loaded.status());
    return nullptr;
  }
  return buildTable(Id, *Loaded);
}

#pragma GCC visibility pop
} // extern "C"
