/* The wide product over padded images: when the grid's vertical step is 1,
 * each thread copies one image at a time into a zero-padded CHW buffer
 * whose row length is a multiple of the horizontal step; then every B row
 * is one strided stream through the whole image (no bounds, no runs), at
 * the price of computing the few extra columns the padding adds to each
 * grid row, which the store skips. Threads own whole images, so a batch of
 * small images keeps all of them busy and nothing is shared but the
 * weights. */
#include <stdint.h>

#include "convgemm.h"
#include "omp_compat.h"

#pragma omp declare target

/* Smaller of two longs. */
static inline long min_l(long a, long b) { return a < b ? a : b; }

/* Larger of two longs. */
static inline long max_l(long a, long b) { return a > b ? a : b; }

/* n rounded up to a multiple of step. */
static inline long round_up(long n, long step) {
  return (n + step - 1) / step * step;
}

/* Aligns p up to a 64-byte cache line. */
static inline float *align64(float *p) {
  return (float *)(((uintptr_t)p + 63) & ~(uintptr_t)63);
}

/* Padding of one axis: rows before the plane and the padded length. */
static void axis_pad(cg_taps t, int size, int grid, int step, int *before,
                     int *len) {
  long last = t.off0 + (long)(t.n - 1) * t.doff;
  long lo = min_l(t.off0, last), hi = max_l(t.off0, last);
  *before = (int)max_l(0, -lo);
  *len = (int)(*before + max_l(size, (long)(grid - 1) * step + hi + 1));
}

cg_flat cg_flat_plan(const cg_gather *g) {
  cg_flat f;
  int wlen;
  axis_pad(g->ty, g->t.h, g->gu, g->sy, &f.pt, &f.hp);
  axis_pad(g->tx, g->t.w, g->gv, g->sx, &f.pl, &wlen);
  f.wp = (int)round_up(wlen, g->sx);
  f.gw = f.wp / g->sx;
  f.plane = (long)f.hp * f.wp;
  /* The extra columns of the last row read past the plane: slack. */
  f.image = g->nch * f.plane + 2 * f.wp + DNNK_NR * g->sx + 16;
  f.cols = (long)g->gu * f.gw;
  /* Read in place (unit column step), B needs no buffer, so a block is
   * the whole image and a depth slice as deep as DNNK_CG_KC_INPLACE. */
  f.inplace = g->sx == 1;
  f.kc = f.inplace ? DNNK_CG_KC_INPLACE : DNNK_KC;
  long kc = min_l(cg_rows(g), DNNK_KC);
  long fit = DNNK_CG_BLOCK / kc / DNNK_NR * DNNK_NR;
  long whole = round_up(f.cols, DNNK_NR);
  f.nb = (int)max_l(DNNK_NR, f.inplace ? min_l(whole, 8 * DNNK_CG_NB)
                                       : min_l(min_l(fit, DNNK_CG_NB), whole));
  f.ok = g->sy == 1 && f.image <= 2 * DNNK_CG_BLOCK;
  return f;
}

size_t cg_flat_slot(const cg_gather *g, const cg_flat *f) {
  long kc = f->inplace ? 0 : min_l(cg_rows(g), DNNK_KC);
  size_t segs = (sizeof(cg_seg) * (f->nb + 1) + 3) / 4;
  size_t firsts = (sizeof(int) * (f->nb / DNNK_NR + 2) + 3) / 4;
  return (size_t)f->image + (size_t)kc * f->nb + segs + firsts +
         DNNK_MR * DNNK_NR + 5 * 16;
}

void cg_flat_offsets(const cg_gather *g, const cg_flat *f, long *roff) {
  for (int r = 0; r < cg_rows(g); ++r) {
    int ch, a, b;
    cg_row(g, r, &ch, &a, &b);
    int uy = g->ty.off0 + a * g->ty.doff, tx = g->tx.off0 + b * g->tx.doff;
    roff[r] = ch * f->plane + (long)(f->pt + uy) * f->wp + f->pl + tx;
  }
}

void cg_pad_image(const cg_gather *g, const cg_flat *f, int b, float *p) {
  const float *src = g->src + b * g->t.bs;
  for (int ch = 0; ch < g->nch; ++ch)
    for (int y = 0; y < f->hp; ++y) {
      float *d = p + ch * f->plane + (long)y * f->wp;
      int sy = y - f->pt;
      if (sy < 0 || sy >= g->t.h) {
        for (int x = 0; x < f->wp; ++x)
          d[x] = 0.0f;
        continue;
      }
      const float *s = src + ch * g->t.cs + sy * g->t.ys;
      int x0 = f->pl, x1 = f->pl + g->t.w;
      for (int x = 0; x < x0; ++x)
        d[x] = 0.0f;
      if (g->t.xs == 1) {
#pragma omp simd
        for (int x = x0; x < x1; ++x)
          d[x] = s[x - x0];
      } else {
        for (int x = x0; x < x1; ++x)
          d[x] = s[(x - x0) * g->t.xs];
      }
      for (int x = x1; x < f->wp; ++x)
        d[x] = 0.0f;
    }
  long tail = f->image - g->nch * f->plane;
  for (long i = 0; i < tail; ++i)
    p[g->nch * f->plane + i] = 0.0f;
}

/* Store segments of wide columns [q0, q0 + cols) of image b: per sliver,
 * runs of valid columns consecutive in the output; first[s] indexes them. */
static void segments(const cg_gather *g, const cg_flat *f, const cg_scatter *o,
                     int b, long q0, int cols, cg_seg *seg, int *first) {
  int n = 0, u = (int)(q0 / f->gw), v = (int)(q0 % f->gw);
  long prev = -2;
  for (int j = 0; j < cols; ++j) {
    if (j % DNNK_NR == 0) {
      first[j / DNNK_NR] = n;
      prev = -2;
    }
    if (v < g->gv) {
      long off = b * o->t.bs + (long)(u * o->ty + o->oy) * o->t.ys +
                 (long)(v * o->tx + o->ox) * o->t.xs;
      if (off == prev + 1) {
        ++seg[n - 1].len;
      } else {
        cg_seg s = {j % DNNK_NR, 1, off};
        seg[n++] = s;
      }
      prev = off;
    } else {
      prev = -2;
    }
    if (++v == f->gw) {
      v = 0;
      ++u;
    }
  }
  first[(cols + DNNK_NR - 1) / DNNK_NR] = n;
}

/* Packs rows [r0, r0 + kc) of wide columns [q0, q0 + cols) from the
 * padded image: one strided stream per row. */
static void pack_flat(const cg_gather *g, const float *img, const long *roff,
                      int r0, int kc, int kc_max, long q0, int cols,
                      float *dst) {
  int sx = g->sx;
  for (int r = r0; r < r0 + kc; ++r) {
    const float *s = img + roff[r] + q0 * sx;
    for (int j0 = 0; j0 < cols; j0 += DNNK_NR) {
      float *d = dst + (long)(j0 / DNNK_NR) * kc_max * DNNK_NR +
                 (long)(r - r0) * DNNK_NR;
      int n = (int)min_l(DNNK_NR, cols - j0);
      const float *sj = s + (long)j0 * sx;
      if (sx == 1) {
#pragma omp simd
        for (int j = 0; j < DNNK_NR; ++j)
          d[j] = j < n ? sj[j] : 0.0f;
      } else {
        for (int j = 0; j < DNNK_NR; ++j)
          d[j] = j < n ? sj[j * sx] : 0.0f;
      }
    }
  }
}

/* Stores one tile's rows through the sliver's segments. */
static void store_segs(const float *acc, const cg_scatter *o, const cg_seg *seg,
                       int nseg, int m0, int mr, int first, const float *bias) {
  for (int i = 0; i < mr; ++i) {
    const float *a = acc + i * DNNK_NR;
    float add = bias ? bias[m0 + i] : 0.0f;
    float *row = o->dst + (m0 + i) * o->t.cs;
    for (int k = 0; k < nseg; ++k) {
      float *d = row + seg[k].dst;
      const float *s = a + seg[k].lane;
      int len = seg[k].len;
      if (first) {
#pragma omp simd
        for (int j = 0; j < len; ++j)
          d[j] = s[j] + add;
      } else {
#pragma omp simd
        for (int j = 0; j < len; ++j)
          d[j] += s[j] + add;
      }
    }
  }
}

/* One image through the wide product, in one thread's slot. */
static void flat_image(const cg_gather *g, const cg_flat *f, int m,
                       const cg_scatter *out, const float *bias,
                       const float *ap, const long *roff, float *slot, int b) {
  int rows = cg_rows(g), mr = cg_tile_rows(m);
  int kc_max = f->inplace ? 0 : (int)min_l(rows, DNNK_KC);
  int ns = (rows + f->kc - 1) / f->kc;
  long mpad = round_up(m, mr);
  float *img = align64(slot);
  float *bbuf = align64(img + f->image);
  cg_seg *seg = (cg_seg *)align64(bbuf + (long)kc_max * f->nb);
  int *first = (int *)align64((float *)(seg + f->nb + 1));
  float *acc = align64((float *)(first + f->nb / DNNK_NR + 2));
  cg_pad_image(g, f, b, img);
  for (long q0 = 0; q0 < f->cols; q0 += f->nb) {
    int cols = (int)min_l(f->nb, f->cols - q0);
    segments(g, f, out, b, q0, cols, seg, first);
    for (int sl = 0; sl < ns; ++sl) {
      int r0 = (int)((long)rows * sl / ns);
      int kc = (int)((long)rows * (sl + 1) / ns) - r0;
      if (!f->inplace)
        pack_flat(g, img, roff, r0, kc, kc_max, q0, cols, bbuf);
      const float *as = ap + mpad * r0;
      const float *b_last = r0 + kc == rows ? bias : NULL;
      for (int j0 = 0; j0 < cols; j0 += DNNK_NR) {
        int s = j0 / DNNK_NR;
        if (first[s + 1] == first[s])
          continue;
        const float *bp = bbuf + (long)s * kc_max * DNNK_NR;
        for (int m0 = 0; m0 < m; m0 += mr) {
          if (f->inplace)
            cg_micro_rows(mr, kc, as + (long)m0 * kc, img + q0 + j0, roff + r0,
                          acc);
          else
            cg_micro(mr, kc, as + (long)m0 * kc, bp, acc);
          store_segs(acc, out, seg + first[s], first[s + 1] - first[s], m0,
                     (int)min_l(mr, m - m0), sl == 0, b_last);
        }
      }
    }
  }
}

void cg_flat_run(const cg_gather *g, const cg_flat *f, int m,
                 const cg_scatter *out, const float *bias, const float *ap,
                 const long *roff, float *slots, size_t slot, int threads) {
#pragma omp parallel num_threads(threads)
  {
    float *mine = slots + slot * omp_get_thread_num();
#pragma omp for schedule(static)
    for (int b = 0; b < g->n; ++b)
      flat_image(g, f, m, out, bias, ap, roff, mine, b);
  }
}

#pragma omp end declare target
