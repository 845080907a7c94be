/* The data gradient of a layer with one input channel at stride 1 (a
 * network's first layer), computed directly on NCHW tensors:
 *   dx[y][x] = sum over k, i, j of w[k][i][j] * dy[k][y + ph - i][x + pw - j].
 * As a GEMM the product has a single row, so each element of its virtual B
 * matrix would be streamed for one FMA. Here each image's dy planes are
 * copied once between zero columns, and a tile of output rows by two vectors
 * of columns accumulates every channel and tap in registers, each loaded
 * source row serving every tile row it reaches. */
#include <stdlib.h>

#include "conv_c1.h"
#include "convgemm.h"
#include "omp_compat.h"

#pragma omp declare target

/* Output rows of a tile. */
#define C1_RB 4
/* Output columns of a tile: two vectors. */
#define C1_XW (2 * DNNK_VLEN)

int c1_applies(const dnnk_conv_desc *d, int layout) {
  return layout == DNNK_NCHW && d->c == 1 && d->stride_h == 1 &&
         d->stride_w == 1 && d->dil_h <= 1 && d->dil_w <= 1;
}

/* Floats of a padded dy row: the reach of the taps of a row's w columns.
 * Lanes of a tile past w read on into the next row; they are not stored. */
static long padded_width(const dnnk_conv_desc *d) { return d->w + d->kw - 1; }

/* Floats of an image's padded planes, with room for the last row's lanes
 * past w. */
static long planes_floats(const dnnk_conv_desc *d) {
  return (long)d->k * dnnk_conv_out_h(d) * padded_width(d) + C1_XW;
}

/* One thread's floats: an image's padded planes and a tile. */
static size_t slot_floats(const dnnk_conv_desc *d) {
  return (size_t)(planes_floats(d) + C1_RB * C1_XW + 32);
}

size_t c1_workspace(const dnnk_conv_desc *d, int threads) {
  return slot_floats(d) * (size_t)(threads > 0 ? threads : 1);
}

/* Columns [lo, hi) of a padded row that hold dy (the rest stay zero): row
 * t holds dy[k][r][t - off], off = kw - 1 - pw, so that column x of a tile
 * reads tap j at t = x + kw - 1 - j. */
static void data_columns(const dnnk_conv_desc *d, long *lo, long *hi,
                         long *off) {
  *off = d->kw - 1 - d->pad_w;
  *lo = *off > 0 ? *off : 0;
  *hi = min_l(padded_width(d), *off + dnnk_conv_out_w(d));
  if (*hi < *lo)
    *hi = *lo;
}

/* dy's planes of image b into pl, whose zero columns are already there. */
CG_NO_CALLS static void pad_planes(const dnnk_conv_desc *d, const float *dy,
                                   int b, float *pl) {
  int oh = dnnk_conv_out_h(d), ow = dnnk_conv_out_w(d);
  long wp = padded_width(d), lo, hi, off;
  data_columns(d, &lo, &hi, &off);
  const float *src = dy + (long)b * d->k * oh * ow;
  for (long r = 0; r < (long)d->k * oh; ++r)
    copy_short(pl + r * wp + lo, src + r * ow + lo - off, (int)(hi - lo));
}

/* acc (C1_RB x C1_XW) = output rows [y0, y0 + rows), columns [x0, x0 + XW)
 * of the image's data gradient, from its padded planes pl. Each source row
 * is loaded once per tap column and used by every tile row it reaches. */
CG_WIDE static void tile(const dnnk_conv_desc *d, int oh, const float *pl,
                         const float *wt, int y0, int rows, int x0,
                         float *acc_out) {
  long wp = padded_width(d), plane = (long)oh * wp;
  int kh = d->kh, kw = d->kw;
  int r_lo = y0 + d->pad_h - kh + 1, r_hi = y0 + rows - 1 + d->pad_h;
  r_lo = r_lo < 0 ? 0 : r_lo;
  r_hi = r_hi >= oh ? oh - 1 : r_hi;
  cg_vf acc[C1_RB][2];
  for (int rr = 0; rr < C1_RB; ++rr)
    acc[rr][0] = acc[rr][1] = (cg_vf){0};
  for (int k = 0; k < d->k; ++k) {
    const float *pk = pl + k * plane + x0 + kw - 1;
    const float *wk = wt + (long)k * kh * kw;
    for (int r = r_lo; r <= r_hi; ++r) {
      const float *src = pk + r * wp;
      const float *wrow[C1_RB];
      for (int rr = 0; rr < C1_RB; ++rr) {
        int i = y0 + rr + d->pad_h - r;
        wrow[rr] = rr < rows && i >= 0 && i < kh ? wk + i * kw : NULL;
      }
      for (int j = 0; j < kw; ++j) {
        cg_vf v0 = *(const cg_vf *)(src - j);
        cg_vf v1 = *(const cg_vf *)(src - j + DNNK_VLEN);
        for (int rr = 0; rr < C1_RB; ++rr)
          if (wrow[rr]) {
            acc[rr][0] += wrow[rr][j] * v0;
            acc[rr][1] += wrow[rr][j] * v1;
          }
      }
    }
  }
  for (int rr = 0; rr < C1_RB; ++rr) {
    *(cg_vf *)(acc_out + rr * C1_XW) = acc[rr][0];
    *(cg_vf *)(acc_out + rr * C1_XW + DNNK_VLEN) = acc[rr][1];
  }
}

/* Image b's data gradient into dx. */
static void image(const dnnk_conv_desc *d, const float *dy, const float *wt,
                  int b, float *dx, float *slot) {
  int oh = dnnk_conv_out_h(d), w = d->w;
  float *pl = align64(slot);
  float *acc = align64(pl + planes_floats(d));
  pad_planes(d, dy, b, pl);
  float *plane = dx + (long)b * d->h * w;
  for (int y0 = 0; y0 < d->h; y0 += C1_RB) {
    int rows = (int)min_l(C1_RB, d->h - y0);
    for (int x0 = 0; x0 < w; x0 += C1_XW) {
      int cols = (int)min_l(C1_XW, w - x0);
      tile(d, oh, pl, wt, y0, rows, x0, acc);
      for (int rr = 0; rr < rows; ++rr)
        copy_short(plane + (long)(y0 + rr) * w + x0, acc + rr * C1_XW, cols);
    }
  }
}

void c1_backward_data(const dnnk_conv_desc *d, const float *dy, const float *wt,
                      float *dx, float *ws, size_t ws_floats) {
  size_t slot = slot_floats(d);
  float *own = NULL;
  int max = omp_in_parallel() ? 1 : omp_get_max_threads();
  if (!ws || ws_floats < slot) {
    ws_floats = slot * (size_t)max;
    ws = own = (float *)malloc(ws_floats * sizeof(float));
    if (!ws)
      return;
  }
  int threads = cg_slot_threads(ws_floats, 0, slot, d->n);
#pragma omp parallel num_threads(threads)
  {
    float *mine = ws + slot * omp_get_thread_num();
    float *pl = align64(mine);
    for (long i = 0; i < planes_floats(d); ++i)
      pl[i] = 0.0f; /* the zero columns, written once per pass */
#pragma omp for schedule(static)
    for (int b = 0; b < d->n; ++b)
      image(d, dy, wt, b, dx, mine);
  }
  free(own);
}

#pragma omp end declare target
