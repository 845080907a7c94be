//===- executor.h - Run kernels on worker threads -----------------*- C++
//-*-===//
//
// How a kernel is called. libomp serves the parallel regions inside a
// kernel on the server's cores; the session decides on which thread.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ompdpu::server {

/// A kernel call: entry address, pointer-sized arguments, a name for crash
/// reports, and what to do when it returns: Done(true) on the thread that
/// still leads the session loop, Done(false) on any other thread.
struct KernelJob {
  uint64_t Entry = 0;
  std::vector<uint64_t> Args;
  const char *Name = nullptr; ///< owned by the session's kernel table
  std::function<void(bool OnLoopThread)> Done;
};

/// Run times of one kernel, to tell short kernels from long ones.
struct KernelTiming {
  unsigned Runs = 0;
  double AverageMicros = 0; ///< exponentially weighted
  /// Record one run.
  void add(double Micros) {
    AverageMicros = Runs ? 0.75 * AverageMicros + 0.25 * Micros : Micros;
    ++Runs;
  }
};

/// Call Entry with every argument passed as a pointer, as LLVM's host plugin
/// does (libffi, all arguments ffi_type_pointer).
void callKernel(uint64_t Entry, const std::vector<uint64_t> &Args);

} // namespace ompdpu::server
