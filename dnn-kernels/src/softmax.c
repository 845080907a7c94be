/* Softmax with cross-entropy loss, fused so the gradient is simply
 * (prob - onehot) / n and no log of a tiny probability is ever taken. */
#include <math.h>

#include "dnnk.h"

#pragma omp declare target

float dnnk_softmax_xent_forward(const float *logits, const int32_t *labels,
                                int n, int classes, float *prob) {
  double loss = 0.0;
#pragma omp parallel for reduction(+ : loss) schedule(static) if ((long)n * classes > 32768)
  for (int b = 0; b < n; ++b) {
    const float *z = logits + (long)b * classes;
    float *p = prob + (long)b * classes;
    /* Shift by the row maximum so exp never overflows. */
    float zmax = z[0];
    for (int j = 1; j < classes; ++j)
      zmax = z[j] > zmax ? z[j] : zmax;
    double sum = 0.0;
    for (int j = 0; j < classes; ++j) {
      p[j] = expf(z[j] - zmax);
      sum += p[j];
    }
    float inv = (float)(1.0 / sum);
    for (int j = 0; j < classes; ++j)
      p[j] *= inv;
    /* log softmax computed from the shifted logits, exact for tiny p. */
    loss += log(sum) - (double)(z[labels[b]] - zmax);
  }
  return (float)(loss / n);
}

void dnnk_softmax_xent_backward(const float *prob, const int32_t *labels, int n,
                                int classes, float *dlogits) {
  float scale = 1.0f / (float)n;
#pragma omp parallel for schedule(static) if ((long)n * classes > 32768)
  for (int b = 0; b < n; ++b) {
    const float *p = prob + (long)b * classes;
    float *g = dlogits + (long)b * classes;
#pragma omp simd
    for (int j = 0; j < classes; ++j)
      g[j] = p[j] * scale;
    g[labels[b]] -= scale;
  }
}

#pragma omp end declare target
