//===- executor.h - How a kernel is called ----------------------*- C++ -*-===//
//
// libomp serves the parallel regions inside a kernel on the server's cores;
// the session decides on which thread a kernel runs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "protocol/messages.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ompdpu::server {

/// Run times of one kernel, to tell short kernels from long ones.
struct KernelTiming {
  unsigned Runs = 0;        ///< timed runs
  unsigned Calls = 0;       ///< all runs
  double AverageMicros = 0; ///< exponentially weighted
  /// Record one run.
  void add(double Micros) {
    AverageMicros = Runs ? 0.75 * AverageMicros + 0.25 * Micros : Micros;
    ++Runs;
  }
};

/// A kernel of a loaded image, as the session's kernel table keeps it.
struct KernelInfo {
  uint64_t Entry = 0;  ///< the kernel function's address
  std::string Name;    ///< as written: "main (faults.c:12)" (kernel_name.h)
  KernelTiming Timing; ///< touched by the loop's leader only
};

/// A kernel call: the kernel, pointer-sized arguments, and whom to answer
/// when it returns (the Run or Batch request's header and sender), with the
/// bytes of which device ranges (a Batch's out pieces).
struct KernelJob {
  KernelInfo *Kernel = nullptr; ///< owned by the session's kernel table
  std::vector<uint64_t> Args;
  protocol::Header Request;
  void *From = nullptr;
  std::vector<protocol::Piece> Out;
};

/// Call Entry with every argument passed as a pointer, as LLVM's host plugin
/// does: directly for up to 16 (an outlined region's own type), through
/// libffi (all arguments ffi_type_pointer) beyond.
void callKernel(uint64_t Entry, const uint64_t *Args, size_t N);

} // namespace ompdpu::server
