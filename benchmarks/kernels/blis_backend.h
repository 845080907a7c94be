// BLIS's sgemm, loaded at run time with RTLD_LOCAL: libblis also exports the
// BLAS/CBLAS names, which must keep resolving to OpenBLAS in this process.
#ifndef DNNK_BENCH_BLIS_BACKEND_H
#define DNNK_BENCH_BLIS_BACKEND_H

#include <string>

namespace bench {

// True when libblis could be loaded (once; later calls reuse it).
bool blis_available();
// BLIS's configuration name for this CPU ("skx", "haswell", ...).
std::string blis_arch();
// Sets the threads BLIS uses.
void blis_set_threads(int n);
// Row-major C = op(A) op(B) (alpha 1, beta 0) through bli_sgemm.
void blis_sgemm(bool ta, bool tb, int m, int n, int k, const float *a, int lda,
                const float *b, int ldb, float *c, int ldc);

} // namespace bench

#endif // DNNK_BENCH_BLIS_BACKEND_H
