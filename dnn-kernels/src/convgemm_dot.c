/* The weights' gradient over padded images: every row of
 * B is a contiguous stream through the padded image and every row of dY
 * one through a copy of dy padded the same way, so dW = dY * B^T is a grid
 * of dot products of contiguous rows (stride phases are planes of their
 * own, convgemm_flat.c). A dot-product tile (DT x DT vector
 * accumulators along the depth, reduced at the end) needs no packing at
 * all, where the outer-product kernel would have to transpose both. */
#include <stdint.h>

#include "convgemm.h"

#pragma omp declare target

/* Rows and columns of a dot-product tile: DT * DT accumulators plus 2 * DT
 * loads fit the 32 vector registers of AVX-512 and NEON. */
#define DT 4

#if defined(__GNUC__) && !defined(DNNK_PLAIN_MICRO)

/* out[i][j] = dot(a[i], b[j]) over len floats (a multiple of VLEN). */
CG_WIDE static void dot_tile(int len, const float *const *a,
                             const float *const *b, float out[DT][DT]) {
  cg_vf acc[DT][DT];
  for (int i = 0; i < DT; ++i)
    for (int j = 0; j < DT; ++j)
      acc[i][j] = (cg_vf){0};
  for (int q = 0; q < len; q += DNNK_VLEN) {
    cg_vf av[DT], bv[DT];
    for (int i = 0; i < DT; ++i)
      av[i] = *(const cg_vf *)(a[i] + q);
    for (int j = 0; j < DT; ++j)
      bv[j] = *(const cg_vf *)(b[j] + q);
    for (int i = 0; i < DT; ++i)
      for (int j = 0; j < DT; ++j)
        acc[i][j] += av[i] * bv[j];
  }
  for (int i = 0; i < DT; ++i)
    for (int j = 0; j < DT; ++j) {
      float s = 0.0f;
      for (int l = 0; l < DNNK_VLEN; ++l)
        s += acc[i][j][l];
      out[i][j] = s;
    }
}

#else

/* out[i][j] = dot(a[i], b[j]) over len floats, plain loops. */
static void dot_tile(int len, const float *const *a, const float *const *b,
                     float out[DT][DT]) {
  for (int i = 0; i < DT; ++i)
    for (int j = 0; j < DT; ++j) {
      float s = 0.0f;
      for (int q = 0; q < len; ++q)
        s += a[i][q] * b[j][q];
      out[i][j] = s;
    }
}

#endif

/* Depth of an image's stream: its wide columns, whole vectors. */
long cg_stream_len(const cg_flat *f) { return round_up(f->cols, DNNK_VLEN); }

int cg_dot_ok(const cg_gather *g, const cg_flat *f, int m) {
  /* Where the outer-product tiles are mostly padding (few output channels
   * or taps); on large products their register reuse wins. */
  return f->ok && (long)m * cg_rows(g) <= 4096;
}

size_t cg_dot_slot(const cg_gather *g, const cg_flat *f, int m) {
  (void)g;
  return (size_t)f->image + (size_t)round_up(m, DT) * cg_stream_len(f) + 3 * 16;
}

CG_NO_CALLS void cg_pad_dy(const cg_gather *g, const cg_flat *f,
                           const cg_scatter *dy, int m, int mrows, int b,
                           float *d) {
  long len = cg_stream_len(f);
  for (int mi = 0; mi < mrows; ++mi) {
    float *row = d + mi * len;
    if (mi >= m) {
      for (long q = 0; q < len; ++q)
        row[q] = 0.0f;
      continue;
    }
    const float *src = dy->dst + b * dy->t.bs + mi * dy->t.cs;
    long xs = dy->t.xs;
    for (int u = 0; u < g->gu; ++u) {
      float *dst = row + (long)u * f->gw;
      const float *s = src + u * dy->t.ys;
      if (xs == 1) {
        copy_short(dst, s, g->gv);
      } else {
        for (int v = 0; v < g->gv; ++v)
          dst[v] = s[v * xs];
      }
      zero_short(dst + g->gv, f->gw - g->gv);
    }
    for (long q = f->cols; q < len; ++q)
      row[q] = 0.0f;
  }
}

void cg_dot_image(const cg_gather *g, const cg_flat *f, const cg_scatter *dy,
                  int m, const long *roff, float *slot, float *c, long ldc,
                  int b) {
  int rows = cg_rows(g), mrows = (int)round_up(m, DT);
  long len = cg_stream_len(f);
  float *buf = align64(slot);
  float *dyw = align64(buf + f->image);
  const float *img = cg_image(g, f, b, buf);
  cg_pad_dy(g, f, dy, m, mrows, b, dyw);
  for (int r0 = 0; r0 < rows; r0 += DT) {
    const float *bp[DT];
    for (int j = 0; j < DT; ++j)
      bp[j] = img + roff[min_l(r0 + j, rows - 1)];
    for (int m0 = 0; m0 < m; m0 += DT) {
      const float *ap[DT];
      float out[DT][DT];
      for (int i = 0; i < DT; ++i)
        ap[i] = dyw + (m0 + i) * len;
      dot_tile((int)len, ap, bp, out);
      for (int i = 0; i < DT && m0 + i < m; ++i)
        for (int j = 0; j < DT && r0 + j < rows; ++j)
          c[(m0 + i) * ldc + r0 + j] += out[i][j];
    }
  }
}

#pragma omp end declare target
