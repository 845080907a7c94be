/* Bias and ReLU layers: memory-bound passes, vectorised and split over
 * threads only when the tensor is large enough to pay for the fork. */
#include "dnnk.h"

#pragma omp declare target

/* Elements below which the passes stay on the calling thread. */
#define DNNK_ELEMWISE_PARALLEL 32768L

void dnnk_bias_forward(const float *x, const float *bias, int n, int c, int hw,
                       float *y) {
#pragma omp parallel for collapse(2)                                           \
    schedule(static) if ((long)n * c * hw > DNNK_ELEMWISE_PARALLEL)
  for (int b = 0; b < n; ++b)
    for (int ci = 0; ci < c; ++ci) {
      long off = ((long)b * c + ci) * hw;
      float add = bias[ci];
#pragma omp simd
      for (int i = 0; i < hw; ++i)
        y[off + i] = x[off + i] + add;
    }
}

void dnnk_bias_backward(const float *dy, int n, int c, int hw, float *dbias) {
#pragma omp parallel for schedule(static) if ((long)n * c * hw >               \
                                              DNNK_ELEMWISE_PARALLEL)
  for (int ci = 0; ci < c; ++ci) {
    /* Double accumulator: a channel sums n * hw terms. */
    double s = 0.0;
    for (int b = 0; b < n; ++b) {
      const float *p = dy + ((long)b * c + ci) * hw;
#pragma omp simd reduction(+ : s)
      for (int i = 0; i < hw; ++i)
        s += p[i];
    }
    dbias[ci] = (float)s;
  }
}

void dnnk_relu_forward(const float *x, long count, float *y) {
#pragma omp parallel for simd schedule(static) if (count >                     \
                                                   DNNK_ELEMWISE_PARALLEL)
  for (long i = 0; i < count; ++i)
    y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void dnnk_relu_backward(const float *x, const float *dy, long count,
                        float *dx) {
#pragma omp parallel for simd schedule(static) if (count >                     \
                                                   DNNK_ELEMWISE_PARALLEL)
  for (long i = 0; i < count; ++i)
    dx[i] = x[i] > 0.0f ? dy[i] : 0.0f;
}

#pragma omp end declare target
