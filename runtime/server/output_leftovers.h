//===- output_leftovers.h - What a dead session printed, unsent -*- C++ -*-===//
#pragma once

#include <cstdint>
#include <vector>

namespace ompdpu::server {

/// The Output frames (stdout first, then stderr) for what a session's
/// kernels wrote to the output area OutputFd and the session did not send
/// before it died. The area is read as untrusted input.
std::vector<std::vector<uint8_t>> leftoverOutputFrames(int OutputFd);

} // namespace ompdpu::server
