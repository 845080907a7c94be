//===- kernel_table.cpp - A session's images and kernels ------------------===//
#include "server/kernel_table.h"

#include "common/kernel_name.h"
#include "common/log.h"

namespace ompdpu::server {

Expected<std::vector<protocol::EntryInfo>>
KernelTable::load(const uint8_t *Image, size_t Size, DeviceMemory &Memory) {
  auto Img = LoadedImage::load(Image, Size);
  if (!Img)
    return Img.status();
  std::vector<protocol::EntryInfo> Entries = (*Img)->entries();
  size_t NewKernels = 0;
  for (const protocol::EntryInfo &E : Entries)
    NewKernels += E.Size == 0;
  if (Kernels.size() + NewKernels > kMaxKernels)
    return Status::error(
        ErrorCode::Load,
        format("too many kernels: %zu loaded, this image has %zu more, a "
               "session holds at most %zu",
               Kernels.size(), NewKernels, kMaxKernels));
  const std::vector<std::string> &Files = (*Img)->sourceFiles();
  for (size_t K = 0; K < Entries.size(); ++K) {
    protocol::EntryInfo &E = Entries[K];
    if (E.Size == 0) {
      Kernels.push_back({E.Addr, kernelDisplayName(E.Name, Files[K]), {}});
      E.Kernel = static_cast<uint16_t>(Kernels.size());
    } else if (Status S = Memory.adopt(E.Addr, E.Size); !S.ok()) {
      OMPDPU_DEBUG_LOG("global %s not adopted: %s", E.Name.c_str(),
                       S.message().c_str());
    }
  }
  OMPDPU_DEBUG_LOG("loaded image of %zu bytes with %zu entries", Size,
                   Entries.size());
  Images.push_back(std::move(*Img));
  return Entries;
}

} // namespace ompdpu::server
