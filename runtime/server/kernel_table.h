//===- kernel_table.h - A session's images and kernels ----------*- C++ -*-===//
//
// The images a client loaded and the kernels they hold, by the handle a Run
// names (1, 2, ...). Globals of an image become device memory the client
// may read and write.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/status.h"
#include "protocol/messages.h"
#include "server/device_memory.h"
#include "server/executor.h"
#include "server/image_loader.h"

#include <deque>
#include <memory>
#include <vector>

namespace ompdpu::server {

class KernelTable {
public:
  /// Kernel handles are 16 bits (the header's Operand).
  static constexpr size_t kMaxKernels = 0xffff;

  /// Load an image; its kernels get handles, its globals are adopted by
  /// Memory. Returns its entries as the plugin is told of them.
  Expected<std::vector<protocol::EntryInfo>>
  load(const uint8_t *Image, size_t Size, DeviceMemory &Memory);
  /// The kernel a Run names by its handle, or null.
  KernelInfo *find(uint16_t Handle) {
    return Handle && Handle <= Kernels.size() ? &Kernels[Handle - 1] : nullptr;
  }
  size_t size() const { return Kernels.size(); }

private:
  std::vector<std::unique_ptr<LoadedImage>> Images;
  /// Handle h is element h-1. A deque: elements never move, and jobs point
  /// to them.
  std::deque<KernelInfo> Kernels;
};

} // namespace ompdpu::server
