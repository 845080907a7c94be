/* Lowering of convolutions to matrices (im2col) and its adjoint (col2im).
 *
 * Row r = (ci * kh + i) * kw + j of the column matrix holds, for every output
 * position (oy, ox), the input pixel x[ci][oy * sh - ph + i][ox * sw - pw + j]
 * (0 outside the image). The padded border is handled by computing the valid
 * output range of each row once, so the inner loops have no branches. */
#include <string.h>

#include "conv_check.h"
#include "dnnk.h"

#pragma omp declare target

/* Larger of two ints. */
static inline int max_int(int a, int b) { return a > b ? a : b; }
/* Smallest of two ints. */
static inline int min_int(int a, int b) { return a < b ? a : b; }

/* First output index o with o * s + off >= 0, i.e. inside the image. */
static inline int first_valid(int off, int s) {
  return off >= 0 ? 0 : (-off + s - 1) / s;
}

/* One past the last output index o < out with o * s + off < size. */
static inline int end_valid(int off, int s, int size, int out) {
  if (size - off <= 0)
    return 0;
  return min_int(out, (size - off + s - 1) / s);
}

/* Fills one row of the column matrix (one channel, one kernel tap). */
static void im2col_row(const float *xc, int h, int w, int oh, int ow, int sh,
                       int sw, int offy, int offx, float *row) {
  /* Clamped: a tap whose padding spans the whole row writes no further. */
  int ox0 = min_int(first_valid(offx, sw), ow),
      ox1 = max_int(ox0, end_valid(offx, sw, w, ow));
  for (int oy = 0; oy < oh; ++oy) {
    float *dst = row + (long)oy * ow;
    int y = oy * sh + offy;
    if (y < 0 || y >= h) {
      memset(dst, 0, sizeof(float) * ow);
      continue;
    }
    const float *src = xc + (long)y * w + offx;
    for (int ox = 0; ox < ox0; ++ox)
      dst[ox] = 0.0f;
    if (sw == 1) {
      memcpy(dst + ox0, src + ox0, sizeof(float) * (ox1 - ox0));
    } else {
#pragma omp simd
      for (int ox = ox0; ox < ox1; ++ox)
        dst[ox] = src[ox * sw];
    }
    for (int ox = ox1; ox < ow; ++ox)
      dst[ox] = 0.0f;
  }
}

void dnnk_im2col(const float *x, int c, int h, int w, int kh, int kw, int sh,
                 int sw, int ph, int pw, float *col, long ldcol) {
  dnnk_conv_desc d = {1, c, h, w, 1, kh, kw, sh, sw, ph, pw, 1, 1};
  dnnk_require_conv(&d, "dnnk_im2col");
  int oh = dnnk_conv_out_h(&d), ow = dnnk_conv_out_w(&d);
  if (ldcol < (long)oh * ow)
    dnnk_fail("dnnk_im2col", "ldcol is below oh * ow");
  int rows = c * kh * kw;
#pragma omp parallel for schedule(static) if (rows * (long)oh * ow > 16384)
  for (int r = 0; r < rows; ++r) {
    int ci = r / (kh * kw), i = r / kw % kh, j = r % kw;
    im2col_row(x + (long)ci * h * w, h, w, oh, ow, sh, sw, i - ph, j - pw,
               col + r * ldcol);
  }
}

/* Adds one column-matrix row back into its channel plane. */
static void col2im_row(const float *row, int h, int w, int oh, int ow, int sh,
                       int sw, int offy, int offx, float *xc) {
  int ox0 = first_valid(offx, sw), ox1 = end_valid(offx, sw, w, ow);
  int oy0 = first_valid(offy, sh), oy1 = end_valid(offy, sh, h, oh);
  for (int oy = oy0; oy < oy1; ++oy) {
    const float *src = row + (long)oy * ow;
    float *dst = xc + (long)(oy * sh + offy) * w + offx;
    if (sw == 1) {
#pragma omp simd
      for (int ox = ox0; ox < ox1; ++ox)
        dst[ox] += src[ox];
    } else {
      for (int ox = ox0; ox < ox1; ++ox)
        dst[ox * sw] += src[ox];
    }
  }
}

void dnnk_col2im(const float *col, long ldcol, int c, int h, int w, int kh,
                 int kw, int sh, int sw, int ph, int pw, float *x) {
  dnnk_conv_desc d = {1, c, h, w, 1, kh, kw, sh, sw, ph, pw, 1, 1};
  dnnk_require_conv(&d, "dnnk_col2im");
  int oh = dnnk_conv_out_h(&d), ow = dnnk_conv_out_w(&d);
  if (ldcol < (long)oh * ow)
    dnnk_fail("dnnk_col2im", "ldcol is below oh * ow");
    /* Parallel over channels: the taps of one channel all add into the same
     * plane, so they stay in one thread and need no atomics. */
#pragma omp parallel for schedule(static) if ((long)c * kh * kw * oh * ow >    \
                                              16384)
  for (int ci = 0; ci < c; ++ci) {
    float *xc = x + (long)ci * h * w;
    memset(xc, 0, sizeof(float) * h * w);
    for (int i = 0; i < kh; ++i)
      for (int j = 0; j < kw; ++j)
        col2im_row(col + ((long)(ci * kh + i) * kw + j) * ldcol, h, w, oh, ow,
                   sh, sw, i - ph, j - pw, xc);
  }
}

#pragma omp end declare target
