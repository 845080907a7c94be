//===- byte_size.h - Sizes given on command lines ---------------*- C++ -*-===//
#pragma once

#include "common/status.h"

#include <cstdint>
#include <string>

namespace ompdpu {

/// Parse "512M", "8G", "1T", "1048576" into bytes (not 0).
Expected<uint64_t> parseByteSize(const std::string &S);

} // namespace ompdpu
