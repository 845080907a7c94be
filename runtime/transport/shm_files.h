//===- shm_files.h - UCX's POSIX shared memory files ------------*- C++ -*-===//
//
// UCX's posix transport, told not to reach segments through /proc links
// (UCX_POSIX_USE_PROC_LINK=n), names each segment as a file in /dev/shm and
// unlinks it only when the worker closes: a process killed first leaves it
// behind, with its memory. The supervisor removes a session's after it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

namespace ompdpu::transport {

/// The /dev/shm files of UCX segments this process maps, by path.
std::vector<std::string> sharedMemoryFiles();

/// Path names a file of the kind sharedMemoryFiles() lists.
bool isSharedMemoryFile(const std::string &Path);

} // namespace ompdpu::transport
