/* Convolution passes lowered to GEMM over the whole batch (as in PyDTNN):
 * one large GEMM per pass keeps the micro-kernel busy even when a single
 * image gives tiny matrices (late layers, 4x4 outputs).
 *
 * With P = n * oh * ow and Q = c * kh * kw, the three passes are
 *   forward:          Y'[k][P]  = W[k][Q]    * col(x)[Q][P]
 *   backward data:    dcol[Q][P] = W^T[Q][k] * dY'[k][P],   dx = col2im(dcol)
 *   backward weights: dW[k][Q]  = dY'[k][P]  * col(x)^T[P][Q]
 * where Y' is Y with the batch moved next to the spatial dimension. */
#include <stdlib.h>
#include <string.h>

#include "conv_internal.h"
#include "dnnk.h"

#pragma omp declare target

int dnnk_conv_out_h(const dnnk_conv_desc *d) {
  return (d->h + 2 * d->pad_h - d->kh) / d->stride_h + 1;
}

int dnnk_conv_out_w(const dnnk_conv_desc *d) {
  return (d->w + 2 * d->pad_w - d->kw) / d->stride_w + 1;
}

/* Spatial size of one output channel. */
static long out_plane(const dnnk_conv_desc *d) {
  return (long)dnnk_conv_out_h(d) * dnnk_conv_out_w(d);
}

/* Rows of the column matrix: one per input channel and kernel tap. */
static int col_rows(const dnnk_conv_desc *d) { return d->c * d->kh * d->kw; }

size_t dnnk_conv_workspace(const dnnk_conv_desc *d) {
  /* A column matrix plus one k x P matrix serves every pass. */
  return (size_t)(col_rows(d) + d->k) * d->n * out_plane(d);
}

/* Returns ws, or a fresh allocation for the pass when ws is NULL. */
static float *workspace_or_alloc(const dnnk_conv_desc *d, float *ws) {
  return ws ? ws : (float *)malloc(dnnk_conv_workspace(d) * sizeof(float));
}

/* y[b][k][p] = t[k][b * ohw + p] (+ bias[k]): back from batch-in-columns. */
static void scatter_output(const dnnk_conv_desc *d, const float *t,
                           const float *bias, float *y) {
  long ohw = out_plane(d), ld = d->n * ohw;
#pragma omp parallel for collapse(2) schedule(static)
  for (int b = 0; b < d->n; ++b)
    for (int k = 0; k < d->k; ++k) {
      const float *src = t + k * ld + b * ohw;
      float *dst = y + ((long)b * d->k + k) * ohw;
      float add = bias ? bias[k] : 0.0f;
#pragma omp simd
      for (long p = 0; p < ohw; ++p)
        dst[p] = src[p] + add;
    }
}

/* t[k][b * ohw + p] = dy[b][k][p]: the batch-in-columns view of dy. */
static void gather_grad(const dnnk_conv_desc *d, const float *dy, float *t) {
  long ohw = out_plane(d), ld = d->n * ohw;
#pragma omp parallel for collapse(2) schedule(static)
  for (int k = 0; k < d->k; ++k)
    for (int b = 0; b < d->n; ++b)
      memcpy(t + k * ld + b * ohw, dy + ((long)b * d->k + k) * ohw,
             sizeof(float) * ohw);
}

void dnnk_conv2d_forward(const dnnk_conv_desc *d, const float *x,
                         const float *wt, const float *bias, float *y,
                         float *workspace) {
  float *ws = workspace_or_alloc(d, workspace);
  if (!ws)
    return;
  long p = d->n * out_plane(d);
  int q = col_rows(d);
  float *col = ws, *t = ws + (long)q * p;
  dnnk_im2col_batch(d, x, col);
  /* A single image is already in k x P order: write y directly. */
  float *dst = d->n == 1 ? y : t;
  dnnk_sgemm(DNNK_NO_TRANS, DNNK_NO_TRANS, d->k, (int)p, q, 1.0f, wt, q, col,
             (int)p, 0.0f, dst, (int)p);
  if (d->n != 1 || bias)
    scatter_output(d, dst, bias, y);
  if (!workspace)
    free(ws);
}

void dnnk_conv2d_backward_data(const dnnk_conv_desc *d, const float *dy,
                               const float *wt, float *dx, float *workspace) {
  float *ws = workspace_or_alloc(d, workspace);
  if (!ws)
    return;
  long p = d->n * out_plane(d);
  int q = col_rows(d);
  float *dcol = ws, *t = ws + (long)q * p;
  const float *g = dy;
  if (d->n != 1) {
    gather_grad(d, dy, t);
    g = t;
  }
  dnnk_sgemm(DNNK_TRANS, DNNK_NO_TRANS, q, (int)p, d->k, 1.0f, wt, q, g, (int)p,
             0.0f, dcol, (int)p);
  dnnk_col2im_batch(d, dcol, dx);
  if (!workspace)
    free(ws);
}

void dnnk_conv2d_backward_weights(const dnnk_conv_desc *d, const float *x,
                                  const float *dy, float *dwt, float *dbias,
                                  float *workspace) {
  float *ws = workspace_or_alloc(d, workspace);
  if (!ws)
    return;
  long p = d->n * out_plane(d);
  int q = col_rows(d);
  float *col = ws, *t = ws + (long)q * p;
  const float *g = dy;
  if (d->n != 1) {
    gather_grad(d, dy, t);
    g = t;
  }
  dnnk_im2col_batch(d, x, col);
  dnnk_sgemm(DNNK_NO_TRANS, DNNK_TRANS, d->k, q, (int)p, 1.0f, g, (int)p, col,
             (int)p, 0.0f, dwt, q);
  if (dbias) {
    /* Row sums of dY' in double: P can reach millions of terms. */
#pragma omp parallel for schedule(static)
    for (int k = 0; k < d->k; ++k) {
      const float *row = g + k * p;
      double s = 0.0;
#pragma omp simd reduction(+ : s)
      for (long i = 0; i < p; ++i)
        s += row[i];
      dbias[k] = (float)s;
    }
  }
  if (!workspace)
    free(ws);
}

#pragma omp end declare target
