/* The wide product (forward, backward data): the weights are packed once,
 * shared; then either threads own whole images on the padded-image path
 * (convgemm_flat.c), or, with fewer images than threads or images too
 * large for it, the columns (output points) are cut into blocks split
 * statically over the threads, each packing its own B block from the
 * tensor, with no barrier between blocks. Tiles go straight into the
 * output tensor, the bias added with the last depth slice. */
#include <stdint.h>
#include <stdlib.h>

#include "alloc.h"
#include "convgemm.h"
#include "omp_compat.h"

#pragma omp declare target

/* Floats that hold count objects of size bytes, plus room to align. */
static inline size_t floats_for(size_t count, size_t size) {
  return (count * size + sizeof(float) - 1) / sizeof(float) + 16;
}

/* Columns per block of the wide product: at most DNNK_CG_NB, a B block of
 * at most DNNK_CG_BLOCK floats, and small enough that a batch gives 16
 * blocks (the shape alone decides, not the thread count that runs it). */
static int wide_block(const cg_gather *g) {
  long kc = min_l(cg_rows(g), DNNK_KC);
  long fit = DNNK_CG_BLOCK / kc / DNNK_NR * DNNK_NR;
  long per = round_up((cg_cols(g) + 15) / 16, DNNK_NR);
  long nb = min_l(min_l(DNNK_CG_NB, fit), per);
  return nb < DNNK_NR ? DNNK_NR : (int)nb;
}

/* Floats of the shared part: packed weights (mpad x R in depth slices of
 * mr-row slivers), then the row geometry table and padded-image offsets. */
static size_t wide_fixed(const cg_gather *g, int m) {
  int mr = cg_tile_rows(m);
  return (size_t)round_up(m, mr) * cg_rows(g) + 16 +
         floats_for(cg_rows(g), sizeof(cg_geom)) +
         floats_for(cg_rows(g), sizeof(long));
}

/* One thread's part: B block, runs, column offsets, flags, tile. */
static size_t block_slot(const cg_gather *g) {
  int nb = wide_block(g), kc = (int)min_l(cg_rows(g), DNNK_KC);
  return (size_t)kc * nb + 16 +
         floats_for(nb + nb / DNNK_NR + 2, sizeof(cg_run)) +
         floats_for(nb, sizeof(long)) + floats_for(nb / DNNK_NR, 1) +
         DNNK_MR * DNNK_NR + 16;
}

/* One thread's part, for whichever path the pass may take. */
static size_t wide_slot(const cg_gather *g) {
  size_t b = block_slot(g);
  cg_flat f = cg_flat_plan(g);
  if (f.ok) {
    size_t p = cg_flat_slot(g, &f);
    b = p > b ? p : b;
  }
  return b;
}

size_t cg_wide_workspace(const cg_gather *g, int m, int threads) {
  return wide_fixed(g, m) + wide_slot(g) * (size_t)(threads > 0 ? threads : 1);
}

/* Depth slices of R rows: as few as KC allows, of near-equal depth (576 =
 * 3 x 192, not 256 + 256 + 64). Slice s starts at row slice_start(s). */
static inline int slices_of(int rows, int cap) {
  return (rows + cap - 1) / cap;
}

/* First row of slice s of ns. */
static inline int slice_start(int rows, int s, int ns) {
  return (int)((long)rows * s / ns);
}

/* Packs every depth slice of the weights into row slivers of mr rows. */
static void pack_weights(const cg_gather *g, const cg_weights *w, int m, int mr,
                         int cap, float *ap, int threads) {
  int rows = cg_rows(g), slices = slices_of(rows, cap);
  int slivers = (m + mr - 1) / mr;
  long mpad = (long)slivers * mr;
#pragma omp parallel for collapse(2) num_threads(threads) if (threads > 1)
  for (int s = 0; s < slices; ++s)
    for (int ir = 0; ir < slivers; ++ir) {
      int r0 = slice_start(rows, s, slices);
      int kc = slice_start(rows, s + 1, slices) - r0;
      float *dst = ap + mpad * r0 + (long)ir * mr * kc;
      for (int p = 0; p < kc; ++p) {
        int ch, a, b;
        cg_row(g, r0 + p, &ch, &a, &b);
        long off = ch * w->cs + (g->ty.k0 + a * g->ty.dk) * w->is +
                   (g->tx.k0 + b * g->tx.dk) * w->js;
        for (int i = 0; i < mr; ++i) {
          int mi = ir * mr + i;
          dst[p * mr + i] = mi < m ? w->wt[mi * w->ms + off] : 0.0f;
        }
      }
    }
}

/* Offsets into out of columns [p0, p0 + cols), and per sliver whether its
 * columns are consecutive (then tiles are stored with vector rows). */
static void column_offsets(const cg_gather *g, const cg_scatter *o, long p0,
                           int cols, long *coff, char *contig) {
  long per = (long)g->gu * g->gv;
  for (int c = 0; c < cols; ++c) {
    long p = p0 + c, rem = p % per;
    int b = (int)(p / per), u = (int)(rem / g->gv), v = (int)(rem % g->gv);
    coff[c] = b * o->t.bs + (long)(u * o->ty + o->oy) * o->t.ys +
              (long)(v * o->tx + o->ox) * o->t.xs;
  }
  for (int s = 0; s * DNNK_NR < cols; ++s) {
    int j0 = s * DNNK_NR, j1 = (int)min_l(cols, j0 + DNNK_NR);
    char ok = 1;
    for (int j = j0 + 1; j < j1; ++j)
      ok &= coff[j] == coff[j - 1] + 1;
    contig[s] = ok;
  }
}

/* Stores an mr x nr tile: set on the first slice, add later, bias last. */
static void store_tile(const float *acc, const cg_scatter *o, const long *coff,
                       char contig, int m0, int mr, int nr, int first,
                       const float *bias) {
  for (int i = 0; i < mr; ++i) {
    const float *a = acc + i * DNNK_NR;
    float add = bias ? bias[m0 + i] : 0.0f;
    float *row = o->dst + (m0 + i) * o->t.cs;
    if (contig) {
      float *d = row + coff[0];
      if (first) {
#pragma omp simd
        for (int j = 0; j < nr; ++j)
          d[j] = a[j] + add;
      } else {
#pragma omp simd
        for (int j = 0; j < nr; ++j)
          d[j] += a[j] + add;
      }
    } else if (first) {
      for (int j = 0; j < nr; ++j)
        row[coff[j]] = a[j] + add;
    } else {
      for (int j = 0; j < nr; ++j)
        row[coff[j]] += a[j] + add;
    }
  }
}

int cg_slot_threads(size_t ws_floats, size_t fixed, size_t slot, long work) {
  int max = omp_in_parallel() ? 1 : omp_get_max_threads();
  long fit = ws_floats > fixed ? (long)((ws_floats - fixed) / slot) : 0;
  long t = min_l(min_l(max, fit), work);
  return t < 1 ? 1 : (int)t;
}

int cg_take_workspace(float **ws, size_t *ws_floats, size_t fixed, size_t slot,
                      long work, float **own, const char *what) {
  *own = NULL;
  if (!*ws || *ws_floats < fixed + slot) {
    int max = omp_in_parallel() ? 1 : omp_get_max_threads();
    *ws_floats = fixed + slot * (size_t)max;
    *ws = *own = (float *)dnnk_alloc(*ws_floats * sizeof(float), what);
  }
  return cg_slot_threads(*ws_floats, fixed, slot, work);
}

/* One block of columns of the wide product, in thread slot sl. */
static void wide_block_run(const cg_gather *g, const cg_geom *geo, int m,
                           const cg_scatter *out, const float *bias,
                           const float *ap, float *slot, long p0, int cols) {
  int rows = cg_rows(g), nb = wide_block(g);
  int kc_max = (int)min_l(rows, DNNK_KC), mr = cg_tile_rows(m);
  long mpad = round_up(m, mr);
  float *bbuf = align64(slot);
  cg_run *runs = (cg_run *)align64(bbuf + (long)kc_max * nb);
  long *coff = (long *)align64((float *)(runs + nb + nb / DNNK_NR + 2));
  char *contig = (char *)align64((float *)(coff + nb));
  float *acc = align64((float *)(contig + nb / DNNK_NR));
  int width = (int)round_up(cols, DNNK_NR);
  int nruns = cg_make_runs(g, p0, width, DNNK_NR, kc_max, runs);
  column_offsets(g, out, p0, cols, coff, contig);
  for (int sl = 0, ns = slices_of(rows, DNNK_KC); sl < ns; ++sl) {
    int r0 = slice_start(rows, sl, ns);
    int kc = slice_start(rows, sl + 1, ns) - r0;
    cg_pack_b(g, geo, r0, kc, runs, nruns, bbuf);
    const float *as = ap + mpad * r0;
    const float *b_last = r0 + kc == rows ? bias : NULL;
    for (int j0 = 0; j0 < cols; j0 += DNNK_NR) {
      const float *bp = bbuf + (long)(j0 / DNNK_NR) * kc_max * DNNK_NR;
      int nr = (int)min_l(DNNK_NR, cols - j0);
      for (int m0 = 0; m0 < m; m0 += mr) {
        cg_micro(mr, kc, as + (long)m0 * kc, bp, acc);
        store_tile(acc, out, coff + j0, contig[j0 / DNNK_NR], m0,
                   (int)min_l(mr, m - m0), nr, r0 == 0, b_last);
      }
    }
  }
}

void cg_wide(const cg_gather *g, const cg_weights *w, int m,
             const cg_scatter *out, const float *bias, float *ws,
             size_t ws_floats) {
  long cols = cg_cols(g);
  int nb = wide_block(g);
  long nblocks = (cols + nb - 1) / nb;
  size_t fixed = wide_fixed(g, m), slot = wide_slot(g);
  float *own;
  int threads = cg_take_workspace(&ws, &ws_floats, fixed, slot, nblocks, &own,
                                  "convGemm: workspace");
  int mr = cg_tile_rows(m);
  float *ap = align64(ws);
  cg_geom *geo = (cg_geom *)align64(ap + round_up(m, mr) * cg_rows(g));
  long *roff = (long *)align64((float *)(geo + cg_rows(g)));
  float *slots = ws + fixed;
  /* Whole images per thread when there are enough of them for every thread
   * the caller allows: decided without the workspace's limit, whose two
   * paths slice the depth differently and so round differently. */
  cg_flat f = cg_flat_plan(g);
  int flat = f.ok && g->n >= (omp_in_parallel() ? 1 : omp_get_max_threads());
  /* Small weights are packed by this thread: a parallel region more costs
   * a wait for the slowest thread, on a shared machine a time slice. */
  long wfloats = (long)m * cg_rows(g);
  pack_weights(g, w, m, mr, flat ? f.kc : DNNK_KC, ap,
               wfloats < (1L << 17) ? 1 : threads);
  if (flat) {
    cg_flat_offsets(g, &f, roff);
    cg_flat_run(g, &f, m, out, bias, ap, roff, slots, slot, threads);
    free(own);
    return;
  }
  cg_row_geoms(g, geo);
#pragma omp parallel num_threads(threads)
  {
    float *mine = slots + slot * omp_get_thread_num();
#pragma omp for schedule(static)
    for (long blk = 0; blk < nblocks; ++blk)
      wide_block_run(g, geo, m, out, bias, ap, mine, blk * nb,
                     (int)min_l(nb, cols - blk * nb));
  }
  free(own);
}

/* Floats of the phases' shared parts: each one's packed weights and rows. */
static size_t phases_fixed(const cg_gather *gs, int np, int m) {
  size_t n = 0;
  for (int p = 0; p < np; ++p)
    n += wide_fixed(&gs[p], m);
  return n;
}

size_t cg_phases_workspace(const cg_gather *gs, int np, int m, int threads) {
  cg_flat fs[DNNK_CG_MAX_PHASES], fc;
  if (np < 1 || np > DNNK_CG_MAX_PHASES || !cg_flat_common(gs, np, fs, &fc))
    return 0;
  return phases_fixed(gs, np, m) +
         cg_flat_slot(&gs[0], &fc) * (size_t)(threads > 0 ? threads : 1);
}

int cg_wide_phases(const cg_gather *gs, const cg_scatter *ss, int np,
                   const cg_weights *w, int m, float *ws, size_t ws_floats) {
  cg_flat fs[DNNK_CG_MAX_PHASES], fc;
  int max = omp_in_parallel() ? 1 : omp_get_max_threads();
  if (np < 1 || np > DNNK_CG_MAX_PHASES || gs[0].n < max ||
      !cg_flat_common(gs, np, fs, &fc))
    return 0;
  size_t fixed = phases_fixed(gs, np, m), slot = cg_flat_slot(&gs[0], &fc);
  float *own = NULL;
  if (!ws || ws_floats < fixed + slot) {
    ws_floats = fixed + slot * (size_t)max;
    ws = own = (float *)malloc(ws_floats * sizeof(float));
    if (!ws)
      return 0;
  }
  int threads = cg_slot_threads(ws_floats, fixed, slot, gs[0].n);
  const float *aps[DNNK_CG_MAX_PHASES];
  const long *roffs[DNNK_CG_MAX_PHASES];
  float *cur = ws;
  int mr = cg_tile_rows(m);
  for (int p = 0; p < np; ++p) {
    float *ap = align64(cur);
    long *roff = (long *)align64(ap + round_up(m, mr) * cg_rows(&gs[p]));
    pack_weights(&gs[p], w, m, mr, fs[p].kc, ap, 1);
    cg_flat_offsets(&gs[p], &fs[p], roff);
    aps[p] = ap;
    roffs[p] = roff;
    cur += wide_fixed(&gs[p], m);
  }
  cg_phases_run(gs, ss, np, fs, &fc, m, aps, roffs, ws + fixed, slot, threads);
  free(own);
  return 1;
}

#pragma omp end declare target
