//===- executor.h - Run kernels on worker threads -----------------*- C++ -*-===//
//
// Kernels run off the progress thread, so that the session keeps answering
// (pings, transfers on other queues) while a long kernel runs. libomp serves
// the parallel regions inside a kernel on the server's cores.
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
/// reports, and what to do (on the executor thread) when it returns.
struct KernelJob {
  uint64_t Entry = 0;
  std::vector<uint64_t> Args;
  std::string Name;
  std::function<void()> Done;
};

/// A growing pool of threads that call kernels through libffi.
class Executor {
public:
  explicit Executor(unsigned MaxThreads) : MaxThreads(MaxThreads) {}
  ~Executor();
  /// Queue a kernel; an idle thread takes it, or a new one is started.
  void submit(KernelJob Job);

private:
  void threadMain();
  unsigned MaxThreads;
  std::mutex M;
  std::condition_variable CV;
  std::deque<KernelJob> Jobs;
  std::vector<std::thread> Threads;
  unsigned Idle = 0;
  bool Stopping = false;
};

/// Call Entry with every argument passed as a pointer, as LLVM's host plugin
/// does (libffi, all arguments ffi_type_pointer).
void callKernel(uint64_t Entry, const std::vector<uint64_t> &Args);

} // namespace ompdpu::server
