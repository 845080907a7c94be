//===- descriptor_limit.h - How many files the server may hold open -------===//
//
// Every connection UCX accepts holds a descriptor until its client proves
// who it is or is dropped: a supervisor left at the usual soft limit (1024)
// stops accepting, its own clients included, once that many are open.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace ompdpu::server {

/// Raise this process's soft RLIMIT_NOFILE to its hard limit; the limit in
/// force afterwards.
uint64_t raiseDescriptorLimit();

/// The RLIMIT_NOFILE to give a session that asks for Wanted: never above
/// this process's hard limit unless it may raise it (CAP_SYS_RESOURCE).
uint64_t sessionDescriptorLimit(uint64_t Wanted);

} // namespace ompdpu::server
