/* convGemm for the weights' gradient: dW (M x R) = dY (M x P) * B^T, the
 * depth P being every output point of the batch. Each thread sums into a
 * private copy of dW (small: output channels x taps) either whole images
 * over padded streams (convgemm_tdeep.c, convgemm_dot.c) or a range of
 * KC-deep chunks of the batch with dY and B^T packed straight from the
 * tensors (here); the copies are then added in thread order. */
#include <stdint.h>
#include <stdlib.h>

#include "convgemm.h"
#include "omp_compat.h"

#pragma omp declare target

/* Rows of B^T packed at a time: whole slivers, about DNNK_CG_BLOCK floats. */
static long bt_rows(const cg_gather *g) {
  long fit = DNNK_CG_BLOCK / DNNK_KC / DNNK_NR * DNNK_NR;
  long all = round_up(cg_rows(g), DNNK_NR);
  return fit < DNNK_NR ? DNNK_NR : fit < all ? fit : all;
}

/* How threads owning images would take the pass: 2 transposed outer
 * products (full MR-row tiles: their register reuse beats dot tiles even
 * on LeNet conv2), 1 dot products (fewer rows: LeNet conv1's 6), or 0: the
 * depth chunks of the batch. */
static int deep_path(const cg_gather *g, const cg_flat *f, int m) {
  int unit = g->sy == 1 && g->sx == 1;
  /* Strided layers copy their images phase by phase: worth it for wide dW
   * only (ResNet 3x3/2: 288 taps; not the 1x1/2 projection's 32). */
  if (f->ok && cg_tile_rows(m) == DNNK_MR &&
      (unit || cg_rows(g) >= 2 * DNNK_NR))
    return 2;
  /* Fewer output channels than a tile: dot products, no padded rows. */
  if (unit && cg_dot_ok(g, f, m))
    return 1;
  return 0;
}

/* Floats of one thread's part: packed dY and B^T chunks, runs, offsets,
 * the tile and the private result. */
static size_t deep_slot(const cg_gather *g, int m) {
  long mpad = round_up(m, cg_tile_rows(m));
  long rpad = round_up(cg_rows(g), DNNK_NR), bt = bt_rows(g);
  size_t runs = (sizeof(cg_run) * (DNNK_KC + 2) + 3) / 4;
  size_t offs = (sizeof(long) * DNNK_KC + 3) / 4;
  size_t n =
      (size_t)(mpad + bt) * DNNK_KC + runs + offs + DNNK_MR * DNNK_NR + 6 * 16;
  cg_flat f = cg_flat_plan(g);
  int path = deep_path(g, &f, m);
  size_t d = path == 1   ? cg_dot_slot(g, &f, m)
             : path == 2 ? cg_tdeep_slot(g, &f, m)
                         : 0;
  n = d > n ? d : n;
  n += (size_t)mpad * rpad + 16;
  /* Whole cache lines, so every slot carves at the same offsets. */
  return (n + 15) / 16 * 16;
}

/* Floats of the shared part: the row geometry table and padded-image row
 * offsets, whole lines. */
static size_t deep_fixed(const cg_gather *g) {
  size_t n = ((sizeof(cg_geom) + sizeof(long)) * cg_rows(g) + 3) / 4 + 16;
  return (n + 15) / 16 * 16 + 16;
}

size_t cg_deep_workspace(const cg_gather *g, int m, int threads) {
  return deep_fixed(g) + deep_slot(g, m) * (size_t)(threads > 0 ? threads : 1);
}

/* Pointers into one thread's slot. */
typedef struct deep_bufs {
  float *a, *bt, *acc, *c;
  cg_run *runs;
  long *coff;
} deep_bufs;

/* Lays out a slot. */
static deep_bufs carve(const cg_gather *g, int m, float *slot) {
  long mpad = round_up(m, cg_tile_rows(m));
  long rpad = round_up(cg_rows(g), DNNK_NR);
  deep_bufs b;
  b.c = align64(slot);
  b.a = align64(b.c + mpad * rpad); /* the dot path's scratch starts here */
  b.bt = align64(b.a + mpad * DNNK_KC);
  b.acc = align64(b.bt + bt_rows(g) * DNNK_KC);
  b.runs = (cg_run *)align64(b.acc + DNNK_MR * DNNK_NR);
  b.coff = (long *)align64((float *)(b.runs + DNNK_KC + 2));
  return b;
}

/* Packs dY's columns of one chunk into row slivers of mr rows. */
static void pack_dy(const cg_gather *g, const cg_scatter *dy, int m, int mr,
                    const cg_run *runs, int nruns, int kc, long *coff,
                    float *a) {
  for (int k = 0; k < nruns; ++k)
    for (int i = 0; i < runs[k].len; ++i) {
      const cg_run *r = &runs[k];
      coff[r->pos + i] = r->b * dy->t.bs +
                         (long)(r->u * dy->ty + dy->oy) * dy->t.ys +
                         (long)((r->v0 + i) * dy->tx + dy->ox) * dy->t.xs;
    }
  (void)g;
  for (int m0 = 0; m0 < m; m0 += mr) {
    float *dst = a + (long)m0 * kc;
    for (int p = 0; p < kc; ++p) {
      const float *src = dy->dst + coff[p];
      for (int i = 0; i < mr; ++i)
        dst[p * mr + i] = m0 + i < m ? src[(m0 + i) * dy->t.cs] : 0.0f;
    }
  }
}

/* Adds one chunk's product into the private result c (mpad x rpad). */
static void chunk(const cg_gather *g, const cg_geom *geo, const cg_scatter *dy,
                  int m, const deep_bufs *b, long p0, int kc) {
  int mr = cg_tile_rows(m), rows = cg_rows(g);
  long rpad = round_up(rows, DNNK_NR);
  int nruns = cg_make_runs(g, p0, kc, kc, 0, b->runs);
  pack_dy(g, dy, m, mr, b->runs, nruns, kc, b->coff, b->a);
  long group = bt_rows(g);
  for (int r0 = 0; r0 < rows; r0 += (int)group) {
    int r1 = (int)min_l(r0 + group, rpad);
    cg_pack_bt(g, geo, r0, r1, kc, b->runs, nruns, b->bt);
    for (int j0 = r0; j0 < r1; j0 += DNNK_NR)
      for (int m0 = 0; m0 < m; m0 += mr) {
        cg_micro(mr, kc, b->a + (long)m0 * kc, b->bt + (long)(j0 - r0) * kc,
                 b->acc);
        for (int i = 0; i < mr; ++i) {
          float *c = b->c + (m0 + i) * rpad + j0;
          const float *s = b->acc + i * DNNK_NR;
#pragma omp simd
          for (int j = 0; j < DNNK_NR; ++j)
            c[j] += s[j];
        }
      }
  }
}

/* Sum of dy's channel mi over the batch and the grid, in double. */
static double channel_sum(const cg_gather *g, const cg_scatter *dy, int mi) {
  double s = 0.0;
  for (int b = 0; b < g->n; ++b)
    for (int u = 0; u < g->gu; ++u) {
      const float *row = dy->dst + b * dy->t.bs + mi * dy->t.cs + u * dy->t.ys;
      long xs = dy->t.xs;
#pragma omp simd reduction(+ : s)
      for (int v = 0; v < g->gv; ++v)
        s += row[v * xs];
    }
  return s;
}

void cg_deep(const cg_gather *g, const cg_scatter *dy, int m, float *dw,
             float *dbias, const cg_weights *w, float *ws, size_t ws_floats) {
  long depth = cg_cols(g), chunks = (depth + DNNK_KC - 1) / DNNK_KC;
  size_t slot = deep_slot(g, m), fixed = deep_fixed(g);
  float *own;
  int threads = cg_take_workspace(&ws, &ws_floats, fixed, slot, chunks, &own,
                                  "convGemm weights' gradient: workspace");
  int rows = cg_rows(g);
  long mpad = round_up(m, cg_tile_rows(m)), rpad = round_up(rows, DNNK_NR);
  cg_geom *geo = (cg_geom *)align64(ws);
  long *roff = (long *)(geo + rows);
  float *base = align64(ws + fixed - 16);
  long c_off = carve(g, m, base).c - base;
  /* Padded streams when threads can own images. */
  cg_flat f = cg_flat_plan(g);
  int path = g->n >= threads ? deep_path(g, &f, m) : 0;
  if (path)
    cg_flat_offsets(g, &f, roff);
  else
    cg_row_geoms(g, geo);
#pragma omp parallel num_threads(threads)
  {
    int t = omp_get_thread_num(), nt = omp_get_num_threads();
    deep_bufs b = carve(g, m, base + slot * t);
    for (long i = 0; i < mpad * rpad; ++i)
      b.c[i] = 0.0f;
    if (path == 1) {
#pragma omp for schedule(static) nowait
      for (int img = 0; img < g->n; ++img)
        cg_dot_image(g, &f, dy, m, roff, b.a, b.c, rpad, img);
    } else if (path == 2) {
#pragma omp for schedule(static) nowait
      for (int img = 0; img < g->n; ++img)
        cg_tdeep_image(g, &f, dy, m, roff, b.a, b.c, rpad, img);
    } else {
      /* Contiguous chunk ranges: each thread walks its part of the batch. */
      long c0 = chunks * t / nt, c1 = chunks * (t + 1) / nt;
      for (long c = c0; c < c1; ++c)
        chunk(g, geo, dy, m, &b, c * DNNK_KC,
              (int)min_l(DNNK_KC, depth - c * DNNK_KC));
    }
#pragma omp barrier
#pragma omp for schedule(static)
    for (int r = 0; r < rows; ++r) {
      int ch, a, bx;
      cg_row(g, r, &ch, &a, &bx);
      long off = ch * w->cs + (g->ty.k0 + a * g->ty.dk) * w->is +
                 (g->tx.k0 + bx * g->tx.dk) * w->js;
      for (int mi = 0; mi < m; ++mi) {
        float s = 0.0f;
        for (int q = 0; q < nt; ++q)
          s += base[slot * q + c_off + mi * rpad + r];
        dw[mi * w->ms + off] = s;
      }
    }
    /* The bias gradient in the same region: one wait fewer. */
    if (dbias) {
#pragma omp for schedule(static)
      for (int mi = 0; mi < m; ++mi)
        dbias[mi] = (float)channel_sum(g, dy, mi);
    }
  }
  free(own);
}

#pragma omp end declare target
