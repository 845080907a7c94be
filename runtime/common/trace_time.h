//===- trace_time.h - The clock and thread ids traces use ------*- C++ -*-===//
//
// Client and session stamp their trace events, and the Trace replies carry
// the session's time, with this one clock: the clock samples that align a
// session's events with the host's compare the same clock on both sides.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <chrono>
#include <cstdint>
#include <sys/syscall.h>
#include <unistd.h>

namespace ompdpu {

/// The steady clock, in ns since its epoch.
inline uint64_t steadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// The calling thread's kernel id (what a trace viewer shows as its tid).
inline uint32_t currentThreadId() {
  return static_cast<uint32_t>(syscall(SYS_gettid));
}

} // namespace ompdpu
