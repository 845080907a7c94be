// BLIS through dlopen. The few types needed are restated from blis.h
// (BLIS 0.9, 64-bit integers): dim_t and inc_t are int64_t, trans_t is an
// enum with BLIS_NO_TRANSPOSE = 0 and BLIS_TRANSPOSE = 1 << 3.
#include "blis_backend.h"

#include <dlfcn.h>

#include <cstdint>

namespace bench {
namespace {

// bli_sgemm(transa, transb, m, n, k, alpha, a, rsa, csa, b, rsb, csb, beta,
// c, rsc, csc): general strides, so row-major needs no transposition trick.
using sgemm_fn = void (*)(int, int, int64_t, int64_t, int64_t, float *, float *,
                          int64_t, int64_t, float *, int64_t, int64_t, float *,
                          float *, int64_t, int64_t);
using set_threads_fn = void (*)(int64_t);
using arch_query_fn = int (*)();
using arch_string_fn = const char *(*)(int);

// Resolved entry points (null when BLIS is missing).
struct Blis {
  sgemm_fn sgemm = nullptr;
  set_threads_fn set_threads = nullptr;
  arch_query_fn arch_query = nullptr;
  arch_string_fn arch_string = nullptr;
};

// Loads libblis once.
const Blis &blis() {
  static Blis b = [] {
    Blis r;
    void *h = dlopen("libblis.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!h)
      h = dlopen("libblis.so", RTLD_NOW | RTLD_LOCAL);
    if (!h)
      return r;
    r.sgemm = (sgemm_fn)dlsym(h, "bli_sgemm");
    r.set_threads = (set_threads_fn)dlsym(h, "bli_thread_set_num_threads");
    r.arch_query = (arch_query_fn)dlsym(h, "bli_arch_query_id");
    r.arch_string = (arch_string_fn)dlsym(h, "bli_arch_string");
    return r;
  }();
  return b;
}

} // namespace

bool blis_available() { return blis().sgemm != nullptr; }

std::string blis_arch() {
  const Blis &b = blis();
  if (!b.arch_query || !b.arch_string)
    return "unknown";
  return b.arch_string(b.arch_query());
}

void blis_set_threads(int n) {
  if (blis().set_threads)
    blis().set_threads(n);
}

void blis_sgemm(bool ta, bool tb, int m, int n, int k, const float *a, int lda,
                const float *b, int ldb, float *c, int ldc) {
  const int kTrans = 1 << 3;
  float one = 1.0f, zero = 0.0f;
  blis().sgemm(ta ? kTrans : 0, tb ? kTrans : 0, m, n, k, &one,
               const_cast<float *>(a), lda, 1, const_cast<float *>(b), ldb, 1,
               &zero, c, ldc, 1);
}

} // namespace bench
