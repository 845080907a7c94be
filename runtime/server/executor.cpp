//===- executor.cpp - Run kernels on worker threads -----------------------===//
#include "server/executor.h"

#include "server/crash_report.h"

#include <ffi.h>

namespace ompdpu::server {

void callKernel(uint64_t Entry, const std::vector<uint64_t> &Args) {
  std::vector<ffi_type *> Types(Args.size(), &ffi_type_pointer);
  std::vector<void *> Values(Args.size());
  std::vector<void *> Ptrs(Args.size());
  for (size_t K = 0; K < Args.size(); ++K) {
    Ptrs[K] = reinterpret_cast<void *>(Args[K]);
    Values[K] = &Ptrs[K];
  }
  ffi_cif Cif;
  if (ffi_prep_cif(&Cif, FFI_DEFAULT_ABI, Args.size(), &ffi_type_void,
                   Types.data()) != FFI_OK)
    return;
  ffi_call(&Cif, reinterpret_cast<void (*)()>(Entry), nullptr, Values.data());
}

Executor::~Executor() {
  {
    std::lock_guard<std::mutex> L(M);
    Stopping = true;
  }
  CV.notify_all();
  for (std::thread &T : Threads)
    T.join();
}

void Executor::submit(KernelJob Job) {
  std::lock_guard<std::mutex> L(M);
  Jobs.push_back(std::move(Job));
  if (Idle == 0 && Threads.size() < MaxThreads)
    Threads.emplace_back([this] { threadMain(); });
  else
    CV.notify_one();
}

void Executor::threadMain() {
  std::unique_lock<std::mutex> L(M);
  for (;;) {
    ++Idle;
    CV.wait(L, [this] { return Stopping || !Jobs.empty(); });
    --Idle;
    if (Jobs.empty())
      return; // stopping
    KernelJob Job = std::move(Jobs.front());
    Jobs.pop_front();
    L.unlock();
    setCurrentKernel(Job.Name.c_str());
    callKernel(Job.Entry, Job.Args);
    setCurrentKernel(nullptr);
    Job.Done();
    L.lock();
  }
}

} // namespace ompdpu::server
