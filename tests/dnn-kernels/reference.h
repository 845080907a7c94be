// Straightforward reference implementations the dnnk kernels are checked
// against: direct loops, double accumulation, no blocking or lowering.
#ifndef DNNK_TESTS_REFERENCE_H
#define DNNK_TESTS_REFERENCE_H

#include <cstdint>
#include <random>
#include <vector>

#include "dnnk.h"

namespace ref {

// C = alpha op(A) op(B) + beta C with double accumulation (beta == 0: C is
// not read).
void gemm(int ta, int tb, int m, int n, int k, float alpha, const float *a,
          int lda, const float *b, int ldb, float beta, float *c, int ldc);

// Direct convolution, y = x * w + bias (bias may be null).
void conv_forward(const dnnk_conv_desc &d, const float *x, const float *w,
                  const float *bias, float *y);
// Direct gradient of the input.
void conv_backward_data(const dnnk_conv_desc &d, const float *dy,
                        const float *w, float *dx);
// Direct gradient of the weights and bias (db may be null).
void conv_backward_weights(const dnnk_conv_desc &d, const float *x,
                           const float *dy, float *dw, float *db);

// Max-pooling by scanning each window; argmax holds in-plane indices.
void maxpool_forward(const dnnk_pool_desc &d, const float *x, float *y,
                     int32_t *argmax);

// One 5-point Jacobi sweep over a whole global grid with fixed (Dirichlet)
// boundary values in a one-point frame: g is (ny + 2) x (nx + 2).
void jacobi_global(int ny, int nx, const std::vector<float> &in,
                   std::vector<float> &out);

} // namespace ref

// Vector of uniform floats in [lo, hi) from a fixed seed.
std::vector<float> random_floats(size_t count, unsigned seed, float lo = -1.0f,
                                 float hi = 1.0f);

// Largest |a - b| / (1 + |b|) over two arrays.
double max_rel_diff(const float *a, const float *b, size_t count);

#endif // DNNK_TESTS_REFERENCE_H
