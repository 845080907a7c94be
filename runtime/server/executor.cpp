//===- executor.cpp - Run kernels on worker threads -----------------------===//
#include "server/executor.h"


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

} // namespace ompdpu::server
