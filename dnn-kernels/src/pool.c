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

/* 2x2 windows at stride 2 inside the plane (training's pooling): the same
 * choices as pool_plane, a row pair at a time with the sizes in registers
 * (through d, every store to arg would reload them). */
static void pool_plane_2x2(const float *restrict x, float *restrict y,
                           int32_t *restrict arg, int w, int oh, int ow) {
  for (int oy = 0; oy < oh; ++oy) {
    const float *r0 = x + (long)(2 * oy) * w, *r1 = r0 + w;
    float *yo = y + (long)oy * ow;
    int32_t *ao = arg ? arg + (long)oy * ow : 0;
    int32_t base = 2 * oy * w;
    for (int ox = 0; ox < ow; ++ox) {
      float best = r0[2 * ox];
      int32_t where = base + 2 * ox;
      if (r0[2 * ox + 1] > best) {
        best = r0[2 * ox + 1];
        where = base + 2 * ox + 1;
      }
      if (r1[2 * ox] > best) {
        best = r1[2 * ox];
        where = base + w + 2 * ox;
      }
      if (r1[2 * ox + 1] > best) {
        best = r1[2 * ox + 1];
        where = base + w + 2 * ox + 1;
      }
      yo[ox] = best;
      if (ao)
        ao[ox] = where;
    }
  }
}

void dnnk_maxpool_forward(const dnnk_pool_desc *d, const float *x, float *y,
                          int32_t *argmax) {
  int oh = dnnk_pool_out_h(d), ow = dnnk_pool_out_w(d);
  long in_plane = (long)d->h * d->w, out_plane = (long)oh * ow;
  int fast = d->kh == 2 && d->kw == 2 && d->stride_h == 2 && d->stride_w == 2 &&
             d->pad_h == 0 && d->pad_w == 0;
  int w = d->w;
#pragma omp parallel for schedule(static)
  for (long pl = 0; pl < (long)d->n * d->c; ++pl) {
    int32_t *arg = argmax ? argmax + pl * out_plane : 0;
    if (fast)
      pool_plane_2x2(x + pl * in_plane, y + pl * out_plane, arg, w, oh, ow);
    else
      pool_plane(d, x + pl * in_plane, y + pl * out_plane, arg, oh, ow);
  }
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
