/* Max-pooling over NCHW planes, recording the argmax so the backward pass is
 * a scatter instead of a second search. */
#include <math.h>
#include <string.h>

#include "dnnk.h"

#pragma omp declare target

int dnnk_pool_out_h(const dnnk_pool_desc *d) {
  return (d->h + 2 * d->pad_h - d->kh) / d->stride_h + 1;
}

int dnnk_pool_out_w(const dnnk_pool_desc *d) {
  return (d->w + 2 * d->pad_w - d->kw) / d->stride_w + 1;
}

/* Pools one plane; windows are clipped to the image (padding never wins). */
static void pool_plane(const dnnk_pool_desc *d, const float *x, float *y,
                       int32_t *arg, int oh, int ow) {
  for (int oy = 0; oy < oh; ++oy)
    for (int ox = 0; ox < ow; ++ox) {
      int y0 = oy * d->stride_h - d->pad_h, x0 = ox * d->stride_w - d->pad_w;
      float best = -INFINITY;
      int32_t where = -1;
      for (int i = 0; i < d->kh; ++i) {
        int yy = y0 + i;
        if (yy < 0 || yy >= d->h)
          continue;
        for (int j = 0; j < d->kw; ++j) {
          int xx = x0 + j;
          if (xx < 0 || xx >= d->w)
            continue;
          float v = x[yy * d->w + xx];
          /* Strict '>' keeps the first maximum; where < 0 admits NaN/-inf. */
          if (v > best || where < 0) {
            best = v;
            where = yy * d->w + xx;
          }
        }
      }
      y[oy * ow + ox] = best;
      if (arg)
        arg[oy * ow + ox] = where;
    }
}

void dnnk_maxpool_forward(const dnnk_pool_desc *d, const float *x, float *y,
                          int32_t *argmax) {
  int oh = dnnk_pool_out_h(d), ow = dnnk_pool_out_w(d);
  long in_plane = (long)d->h * d->w, out_plane = (long)oh * ow;
#pragma omp parallel for schedule(static)
  for (long pl = 0; pl < (long)d->n * d->c; ++pl)
    pool_plane(d, x + pl * in_plane, y + pl * out_plane,
               argmax ? argmax + pl * out_plane : 0, oh, ow);
}

void dnnk_maxpool_backward(const dnnk_pool_desc *d, const float *dy,
                           const int32_t *argmax, float *dx) {
  int oh = dnnk_pool_out_h(d), ow = dnnk_pool_out_w(d);
  long in_plane = (long)d->h * d->w, out_plane = (long)oh * ow;
  /* Parallel over planes: overlapping windows only collide within one. */
#pragma omp parallel for schedule(static)
  for (long pl = 0; pl < (long)d->n * d->c; ++pl) {
    float *dxp = dx + pl * in_plane;
    const float *dyp = dy + pl * out_plane;
    const int32_t *ap = argmax + pl * out_plane;
    memset(dxp, 0, sizeof(float) * in_plane);
    for (long o = 0; o < out_plane; ++o)
      if (ap[o] >= 0)
        dxp[ap[o]] += dyp[o];
  }
}

#pragma omp end declare target
