//===- image_deps.h - Host-only dependencies of a device image --*- C++ -*-===//
//
// clang 15 and later link CPU device images against the host's
// libomptarget.so.<N>, which the image never calls and a DPU does not have
// (in an emulated DPU's server, loading it would start a second offload
// runtime). The image is shipped without that dependency.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/status.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ompdpu::plugin {

/// A copy of the 64-bit little-endian ELF image without its DT_NEEDED
/// entries naming libomptarget.so*, or an empty vector when it has none.
Expected<std::vector<uint8_t>> withoutHostRuntimeDeps(const void *Image,
                                                      size_t Size);

} // namespace ompdpu::plugin
