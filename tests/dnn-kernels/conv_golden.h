/* A fixed set of convolution passes (both layouts, stride, padding,
 * dilation) and the FNV-1a hash of their outputs, shared by the host tests
 * and the cross-ISA check: inputs are multiples of 1/4 in [-2, 2], so every
 * sum is exact in float and any correct build (AVX-512 or NEON tiles, any
 * thread count, padded-image or bounded packing) gives these bits. */
#ifndef DNNK_CONV_GOLDEN_H
#define DNNK_CONV_GOLDEN_H

#include <stdint.h>
#include <stdlib.h>

#include "dnnk.h"

/* FNV-1a 64 of every output of dnnk_conv_golden_hash()'s passes. */
#define DNNK_CONV_GOLDEN 0xf9709aee98e11791ull

/* Exact small values: (i * 37 mod 17 - 8) / 4. */
static inline void dnnk_conv_golden_fill(float *v, long n, int salt) {
  for (long i = 0; i < n; ++i)
    v[i] = (float)((i * 37 + salt) % 17 - 8) * 0.25f;
}

/* FNV-1a 64 of count floats, continuing from h. */
static inline uint64_t dnnk_conv_golden_mix(uint64_t h, const float *v,
                                            long count) {
  const unsigned char *b = (const unsigned char *)v;
  for (long i = 0; i < count * (long)sizeof(float); ++i) {
    h ^= b[i];
    h *= 1099511628211ull;
  }
  return h;
}

/* Runs the three passes of one shape and layout into the hash. DNNK_NCHWC
 * converts the inputs to blocks and the outputs back: exact sums give the
 * NCHW bits on every block size. */
static inline uint64_t
dnnk_conv_golden_case(uint64_t h, const dnnk_conv_desc *d, int layout) {
  int oh = dnnk_conv_out_h(d), ow = dnnk_conv_out_w(d);
  long nx = (long)d->n * d->c * d->h * d->w,
       nw = (long)d->k * d->c * d->kh * d->kw;
  long ny = (long)d->n * d->k * oh * ow;
  int blk = layout == DNNK_NCHWC;
  long bx = blk ? (long)dnnk_blocked_size(d->n, d->c, d->h, d->w) : 0;
  long by = blk ? (long)dnnk_blocked_size(d->n, d->k, oh, ow) : 0;
  float *x = (float *)malloc(sizeof(float) * nx);
  float *w = (float *)malloc(sizeof(float) * nw);
  float *b = (float *)malloc(sizeof(float) * d->k);
  float *y = (float *)malloc(sizeof(float) * ny);
  float *dx = (float *)malloc(sizeof(float) * nx);
  float *dw = (float *)malloc(sizeof(float) * nw);
  float *xb = (float *)malloc(sizeof(float) * (bx + 1));
  float *yb = (float *)malloc(sizeof(float) * (by + 1));
  float *dxb = (float *)malloc(sizeof(float) * (bx + 1));
  dnnk_conv_golden_fill(x, nx, 1);
  dnnk_conv_golden_fill(w, nw, 2);
  dnnk_conv_golden_fill(b, d->k, 3);
  if (blk) {
    dnnk_to_blocked(x, d->n, d->c, d->h, d->w, xb);
    dnnk_conv2d_forward_ex(d, layout, xb, w, b, yb, NULL, 0);
    dnnk_from_blocked(yb, d->n, d->k, oh, ow, y);
  } else {
    dnnk_conv2d_forward_ex(d, layout, x, w, b, y, NULL, 0);
  }
  h = dnnk_conv_golden_mix(h, y, ny);
  dnnk_conv_golden_fill(y, ny, 4); /* y becomes dy */
  if (blk) {
    dnnk_to_blocked(y, d->n, d->k, oh, ow, yb);
    dnnk_conv2d_backward_data_ex(d, layout, yb, w, dxb, NULL, 0);
    dnnk_from_blocked(dxb, d->n, d->c, d->h, d->w, dx);
  } else {
    dnnk_conv2d_backward_data_ex(d, layout, y, w, dx, NULL, 0);
  }
  h = dnnk_conv_golden_mix(h, dx, nx);
  if (blk)
    dnnk_conv2d_backward_weights_ex(d, layout, xb, yb, dw, b, NULL, 0);
  else
    dnnk_conv2d_backward_weights_ex(d, layout, x, y, dw, b, NULL, 0);
  h = dnnk_conv_golden_mix(h, dw, nw);
  h = dnnk_conv_golden_mix(h, b, d->k);
  free(x);
  free(w);
  free(b);
  free(y);
  free(dx);
  free(dw);
  free(xb);
  free(yb);
  free(dxb);
  return h;
}

/* The golden set's shapes. */
#define DNNK_CONV_GOLDEN_SHAPES                                                \
  /* n, c, h, w, k, kh, kw, sh, sw, ph, pw, dh, dw */                          \
  const dnnk_conv_desc shapes[] = {                                            \
      {3, 5, 13, 11, 7, 3, 3, 2, 2, 1, 1, 1, 1},                               \
      {2, 1, 12, 12, 6, 5, 5, 1, 1, 2, 2, 1, 1},                               \
      {2, 6, 10, 9, 13, 3, 3, 1, 1, 2, 2, 2, 2},                               \
      {1, 4, 9, 10, 3, 1, 1, 2, 2, 0, 0, 1, 1},                                \
      {4, 3, 8, 8, 20, 3, 3, 1, 1, 1, 1, 1, 1},                                \
  }

/* FNV-1a 64 of the golden set's passes in one layout alone (NCHW-ordered
 * outputs for DNNK_NCHWC, so NCHWC must equal NCHW). */
#define DNNK_CONV_GOLDEN_NCHW 0x443e7f2ab67d0085ull

/* Hash of the golden set's outputs in one layout. */
static inline uint64_t dnnk_conv_golden_layout_hash(int layout) {
  DNNK_CONV_GOLDEN_SHAPES;
  uint64_t h = 1469598103934665603ull;
  for (unsigned i = 0; i < sizeof shapes / sizeof shapes[0]; ++i)
    h = dnnk_conv_golden_case(h, &shapes[i], layout);
  return h;
}

/* Hash of the golden set's outputs. */
static inline uint64_t dnnk_conv_golden_hash(void) {
  DNNK_CONV_GOLDEN_SHAPES;
  uint64_t h = 1469598103934665603ull;
  for (unsigned i = 0; i < sizeof shapes / sizeof shapes[0]; ++i) {
    h = dnnk_conv_golden_case(h, &shapes[i], DNNK_NCHW);
    h = dnnk_conv_golden_case(h, &shapes[i], DNNK_NHWC);
  }
  return h;
}

#endif /* DNNK_CONV_GOLDEN_H */
