//===- executor.cpp - Run kernels on worker threads -----------------------===//
#include "server/executor.h"

#include <array>
#include <ffi.h>
#include <utility>

namespace ompdpu::server {

namespace {
/// Call interfaces for every argument count up to kCachedArgs: preparing one
/// costs more than an empty kernel.
constexpr size_t kCachedArgs = 64;
struct CallInterfaces {
  ffi_type *Types[kCachedArgs];
  ffi_cif Cif[kCachedArgs + 1];
  bool Ok[kCachedArgs + 1];
  CallInterfaces() {
    for (ffi_type *&T : Types)
      T = &ffi_type_pointer;
    for (size_t N = 0; N <= kCachedArgs; ++N)
      Ok[N] = ffi_prep_cif(&Cif[N], FFI_DEFAULT_ABI, N, &ffi_type_void,
                           Types) == FFI_OK;
  }
};

/// An outlined target region takes only pointers: with up to kDirectArgs of
/// them a direct call through a pointer of its very type is what libffi
/// would do, without libffi's frame setup on the way to a short kernel.
using P = void *;
template <size_t> using Pointer = P;
template <size_t... I>
void callWith(uint64_t Entry, const uint64_t *Args, std::index_sequence<I...>) {
  reinterpret_cast<void (*)(Pointer<I>...)>(Entry)(
      reinterpret_cast<P>(Args[I])...);
}
template <size_t N> void callDirect(uint64_t Entry, const uint64_t *Args) {
  callWith(Entry, Args, std::make_index_sequence<N>());
}
constexpr size_t kDirectArgs = 16;
using DirectCall = void (*)(uint64_t, const uint64_t *);
template <size_t... N>
constexpr std::array<DirectCall, sizeof...(N)>
directCalls(std::index_sequence<N...>) {
  return {&callDirect<N>...};
}
constexpr auto DirectCalls =
    directCalls(std::make_index_sequence<kDirectArgs + 1>());
} // namespace

void callKernel(uint64_t Entry, const uint64_t *Args, size_t N) {
  if (N <= kDirectArgs)
    return DirectCalls[N](Entry, Args);
  static const CallInterfaces Cached;
  if (N <= kCachedArgs && Cached.Ok[N]) {
    void *Ptrs[kCachedArgs];
    void *Values[kCachedArgs];
    for (size_t K = 0; K < N; ++K) {
      Ptrs[K] = reinterpret_cast<void *>(Args[K]);
      Values[K] = &Ptrs[K];
    }
    ffi_call(const_cast<ffi_cif *>(&Cached.Cif[N]),
             reinterpret_cast<void (*)()>(Entry), nullptr, Values);
    return;
  }
  std::vector<ffi_type *> Types(N, &ffi_type_pointer);
  std::vector<void *> Values(N), Ptrs(N);
  for (size_t K = 0; K < N; ++K) {
    Ptrs[K] = reinterpret_cast<void *>(Args[K]);
    Values[K] = &Ptrs[K];
  }
  ffi_cif Cif;
  if (ffi_prep_cif(&Cif, FFI_DEFAULT_ABI, N, &ffi_type_void, Types.data()) !=
      FFI_OK)
    return;
  ffi_call(&Cif, reinterpret_cast<void (*)()>(Entry), nullptr, Values.data());
}

} // namespace ompdpu::server
