/* Fully connected layer: three GEMMs plus a column sum for the bias. */
#include "dnnk.h"

#pragma omp declare target

void dnnk_fc_forward(const float *x, const float *wt, const float *bias, int n,
                     int in, int out, float *y) {
  dnnk_sgemm(DNNK_NO_TRANS, DNNK_TRANS, n, out, in, 1.0f, x, in, wt, in, 0.0f,
             y, out);
  if (bias) {
#pragma omp parallel for schedule(static) if ((long)n * out > 32768)
    for (int b = 0; b < n; ++b)
#pragma omp simd
      for (int o = 0; o < out; ++o)
        y[(long)b * out + o] += bias[o];
  }
}

void dnnk_fc_backward(const float *x, const float *wt, const float *dy, int n,
                      int in, int out, float *dx, float *dwt, float *dbias) {
  if (dx)
    dnnk_sgemm(DNNK_NO_TRANS, DNNK_NO_TRANS, n, in, out, 1.0f, dy, out, wt, in,
               0.0f, dx, in);
  if (dwt)
    dnnk_sgemm(DNNK_TRANS, DNNK_NO_TRANS, out, in, n, 1.0f, dy, out, x, in,
               0.0f, dwt, in);
  if (dbias) {
#pragma omp parallel for schedule(static) if ((long)n * out > 32768)
    for (int o = 0; o < out; ++o) {
      float s = 0.0f;
      for (int b = 0; b < n; ++b)
        s += dy[(long)b * out + o];
      dbias[o] = s;
    }
  }
}

#pragma omp end declare target
