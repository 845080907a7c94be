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

/* Rows of a padded plane: kh - 1 zero rows above dy's rows and enough
 * below for the last tile's reach (to padded row h - 1 + ph + RB + kh - 2),
 * so that every tile reads all its taps' rows, edge tiles too. */
static long padded_rows(const dnnk_conv_desc *d) {
  long data = d->kh - 1 + dnnk_conv_out_h(d);
  long reach = (long)d->h + d->pad_h + C1_RB + d->kh - 2;
  return data > reach ? data : reach;
}

/* Floats of an image's padded planes, with room for the last row's lanes
 * past w. */
static long planes_floats(const dnnk_conv_desc *d) {
  return (long)d->k * padded_rows(d) * padded_width(d) + C1_XW;
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

/* dy's planes of image b into pl, whose zero rows and columns are already
 * there. */
CG_NO_CALLS static void pad_planes(const dnnk_conv_desc *d, const float *dy,
                                   int b, float *pl) {
  int oh = dnnk_conv_out_h(d), ow = dnnk_conv_out_w(d);
  long wp = padded_width(d), plane = padded_rows(d) * wp, lo, hi, off;
  data_columns(d, &lo, &hi, &off);
  const float *src = dy + (long)b * d->k * oh * ow;
  for (int k = 0; k < d->k; ++k) {
    float *pk = pl + k * plane + (d->kh - 1) * wp + lo;
    for (int r = 0; r < oh; ++r)
      copy_short(pk + r * wp, src + ((long)k * oh + r) * ow + lo - off,
                 (int)(hi - lo));
  }
}

/* acc (C1_RB x C1_XW) = output rows [y0, y0 + RB), columns [x0, x0 + XW)
 * of the image's data gradient, from its padded planes pl. Source row s of
 * the tile (padded row y0 + ph + s) feeds tile row rr through tap row
 * i = rr + kh - 1 - s; each is loaded once per tap column and used by every
 * tile row it reaches. With constant kh and kw the loops unroll whole. */
CG_WIDE static inline __attribute__((always_inline)) void
tile_taps(int kh, int kw, int k_count, long plane, long wp, const float *pl,
          const float *wt, float *acc_out) {
  cg_vf acc[C1_RB][2];
  for (int rr = 0; rr < C1_RB; ++rr)
    acc[rr][0] = acc[rr][1] = (cg_vf){0};
  for (int k = 0; k < k_count; ++k) {
    const float *pk = pl + k * plane + kw - 1;
    const float *wk = wt + (long)k * kh * kw;
    /* Tap column by tap column: its kh weights stay in registers. */
    for (int j = 0; j < kw; ++j) {
      for (int s = 0; s < C1_RB + kh - 1; ++s) {
        const float *src = pk + s * wp - j;
        cg_vf v0 = *(const cg_vf *)src;
        cg_vf v1 = *(const cg_vf *)(src + DNNK_VLEN);
        for (int rr = 0; rr < C1_RB; ++rr) {
          int i = rr + kh - 1 - s;
          if (i >= 0 && i < kh) {
            acc[rr][0] += wk[i * kw + j] * v0;
            acc[rr][1] += wk[i * kw + j] * v1;
          }
        }
      }
    }
  }
  for (int rr = 0; rr < C1_RB; ++rr) {
    *(cg_vf *)(acc_out + rr * C1_XW) = acc[rr][0];
    *(cg_vf *)(acc_out + rr * C1_XW + DNNK_VLEN) = acc[rr][1];
  }
}

/* The tile at output row y0, column x0; the common kernel sizes get their
 * own unrolled copies. */
CG_WIDE static void tile(const dnnk_conv_desc *d, const float *pl,
                         const float *wt, int y0, int x0, float *acc_out) {
  long wp = padded_width(d), plane = padded_rows(d) * wp;
  const float *at = pl + (long)(y0 + d->pad_h) * wp + x0;
  if (d->kh == 5 && d->kw == 5)
    tile_taps(5, 5, d->k, plane, wp, at, wt, acc_out);
  else if (d->kh == 3 && d->kw == 3)
    tile_taps(3, 3, d->k, plane, wp, at, wt, acc_out);
  else
    tile_taps(d->kh, d->kw, d->k, plane, wp, at, wt, acc_out);
}

/* Image b's data gradient into dx. */
static void image(const dnnk_conv_desc *d, const float *dy, const float *wt,
                  int b, float *dx, float *slot) {
  int w = d->w;
  float *pl = align64(slot);
  float *acc = align64(pl + planes_floats(d));
  pad_planes(d, dy, b, pl);
  float *plane = dx + (long)b * d->h * w;
  for (int y0 = 0; y0 < d->h; y0 += C1_RB) {
    int rows = (int)min_l(C1_RB, d->h - y0);
    for (int x0 = 0; x0 < w; x0 += C1_XW) {
      int cols = (int)min_l(C1_XW, w - x0);
      tile(d, pl, wt, y0, x0, acc);
      for (int rr = 0; rr < rows; ++rr)
        copy_short(plane + (long)(y0 + rr) * w + x0, acc + rr * C1_XW, cols);
    }
  }
}

void c1_backward_data(const dnnk_conv_desc *d, const float *dy, const float *wt,
                      float *dx, float *ws, size_t ws_floats) {
  size_t slot = slot_floats(d);
  float *own;
  int threads = cg_take_workspace(&ws, &ws_floats, 0, slot, d->n, &own,
                                  "one-channel data gradient: workspace");
  long planes = planes_floats(d);
#pragma omp parallel num_threads(threads)
  {
    float *mine = ws + slot * omp_get_thread_num();
    float *pl = align64(mine);
    for (long i = 0; i < planes; ++i)
      pl[i] = 0.0f; /* the zero rows and columns, written once per pass */
#pragma omp for schedule(static)
    for (int b = 0; b < d->n; ++b)
      image(d, dy, wt, b, dx, mine);
  }
  free(own);
}

#pragma omp end declare target
