//===- transport_list.h - Reading UCX_TLS lists -----------------*- C++ -*-===//
//
// UCX's settings for a transport it does not load are reported on the
// program's stdout ("unused env variables", "invalid configuration"). The
// worker sets its shared-memory settings only when the transport list in
// force may load shared memory.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

namespace ompdpu::transport {

/// Whether UCX, given this UCX_TLS value, may use its shared-memory
/// transports of the "mm" kind (posix, sysv). UCX's syntax: a
/// comma-separated list; "all", "sm"/"shm" and "mm" name groups that hold
/// them; a leading "^" excludes the listed ones instead; a "\" before a name
/// means that transport exactly. Empty: all transports.
bool mayUseSharedMemory(const std::string &TransportList);

} // namespace ompdpu::transport
