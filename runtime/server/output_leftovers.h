//===- output_leftovers.h - What a dead session printed, unsent -*- C++ -*-===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ompdpu::server {

/// The Output frames (stdout first, then stderr) for what a session's
/// kernels wrote to the output area OutputFd and the session did not send
/// before it died, each stream followed by Raw[stream - 1] (what its crash
/// handler found still in the pipes behind fds 1 and 2). The area is read
/// as untrusted input.
std::vector<std::vector<uint8_t>>
leftoverOutputFrames(int OutputFd, const std::string (&Raw)[2]);

} // namespace ompdpu::server
