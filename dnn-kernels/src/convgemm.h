/* convGemm: convolution passes as GEMMs whose packed operands are gathered
 * straight from the tensors (no im2col matrix), after Barrachina et al.
 * (JPDC 2022) and hpca-uji/convGemm.
 *
 * The virtual B matrix has one row per (channel, tap) and one column per
 * point (b, u, v) of an output grid; element (r, p) is
 *   src[b][chan(r)][u * sy + ty(r)][v * sx + tx(r)]   (0 outside the plane)
 * and every pass is one of two products over it:
 *   - wide:  C (M x P) = A (M x R) * B, C scattered into an NCHW/NHWC tensor
 *            (forward; backward data as a stride-1 correlation per phase);
 *   - deep:  C (M x R) = A (M x P) * B^T, summed over P (backward weights). */
#ifndef DNNK_CONVGEMM_H
#define DNNK_CONVGEMM_H

#include "dnnk.h"
#include "gemm_config.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma omp declare target

/* Smaller of two longs. */
static inline long min_l(long a, long b) { return a < b ? a : b; }

/* n rounded up to a multiple of step. */
static inline long round_up(long n, long step) {
  return (n + step - 1) / step * step;
}

/* Aligns p up to a 64-byte cache line. */
static inline float *align64(float *p) {
  return (float *)(((uintptr_t)p + 63) & ~(uintptr_t)63);
}

/* A 4D tensor seen as [image][channel][row][column] through strides. */
typedef struct cg_tensor {
  long bs, cs, ys, xs; /* strides of image, channel, row, column */
  int h, w;            /* plane size, for bounds */
} cg_tensor;

/* The taps of one axis, an arithmetic progression: tap a reads the source
 * at grid * step + off0 + a * doff and uses kernel index k0 + a * dk. */
typedef struct cg_taps {
  int n, off0, doff, k0, dk;
} cg_taps;

/* The virtual B matrix: which source element each (row, column) reads. */
typedef struct cg_gather {
  const float *src;
  cg_tensor t;
  int n, gu, gv;  /* grid: columns p = (b * gu + u) * gv + v */
  int sy, sx;     /* source step per grid step */
  int nch;        /* channels of the source used */
  cg_taps ty, tx; /* taps along rows and columns */
  int chan_last;  /* rows ordered (tap, channel) instead of (channel, tap) */
} cg_gather;

/* Where column p of C goes: dst[b][m][u * ty + oy][v * tx + ox]. */
typedef struct cg_scatter {
  float *dst;
  cg_tensor t; /* cs is the stride between C rows (output channels) */
  int ty, tx, oy, ox;
} cg_scatter;

/* Weights as the A operand: element (m, r) = wt[m * ms + chan * cs + i * is
 * + j * js], with (chan, i, j) the row's channel and kernel taps. */
typedef struct cg_weights {
  const float *wt;
  long ms, cs, is, js;
} cg_weights;

/* Rows and runs are short (a grid row at most): clang would turn their
 * copy loops into memcpy/memset calls, which cost more than the copies. */
#define CG_NO_CALLS __attribute__((no_builtin("memcpy", "memset", "memmove")))

/* Portable 8- and 4-float vectors for short copies (AVX, SSE or NEON). */
typedef float cg_v8 __attribute__((vector_size(32), aligned(4)));
/* Four floats. */
typedef float cg_v4 __attribute__((vector_size(16), aligned(4)));
/* One vector register of floats (DNNK_VLEN); aligned(4) allows unaligned
 * access. */
typedef float cg_vf
    __attribute__((vector_size(DNNK_VLEN * sizeof(float)), aligned(4)));

/* Keeps 512-bit generic vectors whole on AVX-512 in a kernel (see
 * gemm_micro.c). */
#if defined(__clang__) && DNNK_VLEN * 32 >= 512
#define CG_WIDE __attribute__((min_vector_width(DNNK_VLEN * 32)))
#else
#define CG_WIDE
#endif

/* d[0, n) = s[0, n) for short n: whole vectors, then at most 3 scalars
 * (a vectorised loop would leave up to 15 to a scalar remainder). */
CG_NO_CALLS static inline void copy_short(float *restrict d,
                                          const float *restrict s, int n) {
  int i = 0;
  for (; i + 8 <= n; i += 8)
    *(cg_v8 *)(d + i) = *(const cg_v8 *)(s + i);
  if (i + 4 <= n) {
    *(cg_v4 *)(d + i) = *(const cg_v4 *)(s + i);
    i += 4;
  }
  for (; i < n; ++i)
    d[i] = s[i];
}

/* d[0, n) = 0 for short n. */
CG_NO_CALLS static inline void zero_short(float *d, int n) {
  int i = 0;
  for (; i + 8 <= n; i += 8)
    *(cg_v8 *)(d + i) = (cg_v8){0};
  for (; i < n; ++i)
    d[i] = 0.0f;
}

/* d[i] = s[2 i] for i < n, reading no further than s[avail - 1]: 8 at a
 * time by deinterleaving 16 contiguous floats (a strided scalar loop is
 * slow). */
CG_NO_CALLS static inline void
copy_stride2(float *restrict d, const float *restrict s, int n, long avail) {
  int i = 0;
#if defined(__clang__) && !defined(DNNK_PLAIN_MICRO)
  for (; i + 8 <= n && 2L * i + 16 <= avail; i += 8) {
    cg_v8 lo = *(const cg_v8 *)(s + 2 * i),
          hi = *(const cg_v8 *)(s + 2 * i + 8);
    *(cg_v8 *)(d + i) =
        __builtin_shufflevector(lo, hi, 0, 2, 4, 6, 8, 10, 12, 14);
  }
#endif
  for (; i < n; ++i)
    d[i] = s[2 * i];
}

/* d[2 i] = s[i], d[2 i + 1] = 0 for i < n: a stride-2 row with the zeros
 * between its points, 8 points (two 8-float stores) at a time. */
CG_NO_CALLS static inline void spread_stride2(float *restrict d,
                                              const float *restrict s, int n) {
  int i = 0;
#if defined(__clang__) && !defined(DNNK_PLAIN_MICRO)
  const cg_v8 z = {0};
  for (; i + 8 <= n; i += 8) {
    cg_v8 v = *(const cg_v8 *)(s + i);
    *(cg_v8 *)(d + 2 * i) =
        __builtin_shufflevector(v, z, 0, 8, 1, 8, 2, 8, 3, 8);
    *(cg_v8 *)(d + 2 * i + 8) =
        __builtin_shufflevector(v, z, 4, 8, 5, 8, 6, 8, 7, 8);
  }
#endif
  for (; i < n; ++i) {
    d[2 * i] = s[i];
    d[2 * i + 1] = 0.0f;
  }
}

/* Prefetches floats floats from p, one line per step floats. */
static inline void prefetch_span(const float *p, long floats, long step,
                                 int write) {
  for (long i = 0; i < floats; i += step) {
    if (write)
      __builtin_prefetch(p + i, 1, 3);
    else
      __builtin_prefetch(p + i, 0, 3);
  }
}

/* d[0, n) = s[0, n) + add (set) or d += s + add, for short n: whole 8- and
 * 4-float vectors first (a vectorised loop would leave up to 31 to its
 * scalar remainder). */
static inline void store_short(float *restrict d, const float *restrict s,
                               float add, int n, int set) {
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    cg_v8 v = *(const cg_v8 *)(s + i) + add;
    *(cg_v8 *)(d + i) = set ? v : *(cg_v8 *)(d + i) + v;
  }
  if (i + 4 <= n) {
    cg_v4 v = *(const cg_v4 *)(s + i) + add;
    *(cg_v4 *)(d + i) = set ? v : *(cg_v4 *)(d + i) + v;
    i += 4;
  }
  for (; i < n; ++i)
    d[i] = set ? s[i] + add : d[i] + s[i] + add;
}

/* Rows of the virtual B matrix. */
static inline int cg_rows(const cg_gather *g) {
  return g->nch * g->ty.n * g->tx.n;
}

/* Columns of the virtual B matrix. */
static inline long cg_cols(const cg_gather *g) {
  return (long)g->n * g->gu * g->gv;
}

/* Channel and tap numbers (along y, x) of row r. */
static inline void cg_row(const cg_gather *g, int r, int *ch, int *a, int *b) {
  if (g->chan_last) {
    *ch = r % g->nch;
    r /= g->nch;
    *b = r % g->tx.n;
    *a = r / g->tx.n;
  } else {
    *b = r % g->tx.n;
    r /= g->tx.n;
    *a = r % g->ty.n;
    *ch = r / g->ty.n;
  }
}

/* A stretch of columns inside one grid row (fixed b, u): v0 .. v0+len-1,
 * landing at offset pos of the packed buffer (b < 0: zero padding); base
 * is the source offset of (b, u, v0) before the row's taps. */
typedef struct cg_run {
  int b, u, v0, len, pos;
  long base;
} cg_run;

/* Splits columns [p0, p0 + count) into runs, also cutting at every split
 * columns (sliver width); returns the number of runs. Each run's pos is
 * its first column's lane offset: sliver * kc * split + lane, or the
 * column offset when split covers the whole range. */
int cg_make_runs(const cg_gather *g, long p0, int count, int split, int kc,
                 cg_run *runs);

/* Where one row of B reads: offset from a run's base, and the grid rows
 * and columns whose source lies inside the plane. */
typedef struct cg_geom {
  long off;
  int u0, u1, v0, v1;
} cg_geom;

/* The geometry of every row (cg_rows of them), worked out once per pass. */
void cg_row_geoms(const cg_gather *g, cg_geom *out);

/* Packs rows [r0, r0 + kc) of B for the runs into NR-wide slivers (depth
 * kc); lanes beyond the runs must be covered by zero runs. */
void cg_pack_b(const cg_gather *g, const cg_geom *geo, int r0, int kc,
               const cg_run *runs, int nruns, float *dst);

/* Packs B^T: depth = the runs' columns (kc of them), NR-wide slivers over
 * rows [r0, r1) (r0 and r1 multiples of NR); rows from R on read as zero. */
void cg_pack_bt(const cg_gather *g, const cg_geom *geo, int r0, int r1, int kc,
                const cg_run *runs, int nruns, float *dst);

/* The MR x NR product of two packed slivers over depth kc, into acc
 * (row-major MR x NR); rows < MR computes only that many rows (A packed
 * with rows per depth step). */
void cg_micro(int rows, int kc, const float *ap, const float *bp, float *acc);

/* cg_micro with B read in place: depth step p's NR floats start at
 * base + roff[p]. */
void cg_micro_rows(int rows, int kc, const float *ap, const float *base,
                   const long *roff, float *acc);

/* Rows per A sliver for an M-row product: fewer than MR when M is small. */
int cg_tile_rows(int m);

/* Largest stride the padded-image path splits into phase planes. */
#define DNNK_CG_MAX_STEP 8

/* The padded-image plan of a wide product (convgemm_flat.c). */
typedef struct cg_flat {
  int ok;            /* the padded image fits the budget */
  int pt, pl;        /* padding before a plane: rows, columns */
  int hp, wp, gw;    /* plane rows and row length; wide grid row length */
  long plane, image; /* floats of a padded plane, of the padded image */
  long cols;         /* wide columns of an image, gu * gw */
  int nb;            /* wide columns per block */
  int planes;        /* channels x stride phases read by some tap */
  int nph_y, nph_x;  /* phases read along each axis */
  int ph_y[DNNK_CG_MAX_STEP], ph_x[DNNK_CG_MAX_STEP]; /* plane index or -1 */
  int kc; /* most rows per depth slice */
} cg_flat;

/* One run of a tile row's lanes that lands contiguously in the output. */
typedef struct cg_seg {
  int lane, len;
  long dst;
} cg_seg;

/* Works out the padded-image plan of g. */
cg_flat cg_flat_plan(const cg_gather *g);
/* Floats of one thread's slot on the padded-image path. */
size_t cg_flat_slot(const cg_gather *g, const cg_flat *f);
/* Offsets of every B row into a padded image. */
void cg_flat_offsets(const cg_gather *g, const cg_flat *f, long *roff);
/* Copies image b of g's source into a padded buffer (zeros around it). */
void cg_pad_image(const cg_gather *g, const cg_flat *f, int b, float *p);
/* Image b as the plan's planes: the source itself when it already has that
 * shape (and the reads past it stay inside the tensor), else padded into
 * buf. */
const float *cg_image(const cg_gather *g, const cg_flat *f, int b, float *buf);
/* The wide product with threads owning images; ap holds the packed
 * weights, slots threads slots of slot floats. */
void cg_flat_run(const cg_gather *g, const cg_flat *f, int m,
                 const cg_scatter *out, const float *bias, const float *ap,
                 const long *roff, float *slots, size_t slot, int threads);

/* Most stride phases cg_wide_phases takes at once. */
#define DNNK_CG_MAX_PHASES 64

/* Plans the phases gs[0, np) of a strided backward data (same source, unit
 * steps) over one common padded image fc, with fs the phases' plans on it;
 * returns 0 when they cannot share one (or it is too large). */
int cg_flat_common(const cg_gather *gs, int np, cg_flat *fs, cg_flat *fc);
/* Every phase of each image from one padded copy, threads owning images;
 * ap and roff per phase, slots of slot floats (>= cg_flat_slot of fc). */
void cg_phases_run(const cg_gather *gs, const cg_scatter *ss, int np,
                   const cg_flat *fs, const cg_flat *fc, int m,
                   const float *const *ap, const long *const *roff,
                   float *slots, size_t slot, int threads);
/* The phases of a strided backward data through cg_phases_run; returns 0
 * (nothing done) when they cannot share a padded image or threads cannot
 * own images. */
int cg_wide_phases(const cg_gather *gs, const cg_scatter *ss, int np,
                   const cg_weights *w, int m, float *ws, size_t ws_floats);
/* Floats cg_wide_phases needs for up to threads threads (0: not possible). */
size_t cg_phases_workspace(const cg_gather *gs, int np, int m, int threads);

/* C (M x P) = W * B, scattered (plus bias[m] when bias is non-NULL), over
 * the given workspace (ws_floats of it); parallel over column blocks. */
void cg_wide(const cg_gather *g, const cg_weights *w, int m,
             const cg_scatter *out, const float *bias, float *ws,
             size_t ws_floats);

/* Floats cg_wide needs for up to threads threads. */
size_t cg_wide_workspace(const cg_gather *g, int m, int threads);

/* dW (M x R, through w's strides, overwritten) = dY * B^T, with dY read
 * through dy's mapping of the same grid, and dbias (may be NULL) = dY's row
 * sums; parallel over the depth. */
void cg_deep(const cg_gather *g, const cg_scatter *dy, int m, float *dw,
             float *dbias, const cg_weights *w, float *ws, size_t ws_floats);

/* Threads for a pass over work items: as many as the workspace has slots
 * for after its fixed part, at most the caller allows and one per item. */
int cg_slot_threads(size_t ws_floats, size_t fixed, size_t slot, long work);

/* A pass's workspace: the caller's *ws when it holds the fixed part and one
 * slot, else a new one (*own, for the caller to free; what names it in the
 * out-of-memory error) with a slot per thread allowed. Returns the threads
 * for work items, as cg_slot_threads. */
int cg_take_workspace(float **ws, size_t *ws_floats, size_t fixed, size_t slot,
                      long work, float **own, const char *what);

/* Whether the weights' gradient (m rows) takes dot products of padded
 * streams (convgemm_dot.c): padded-image plan and a small dW. */
int cg_dot_ok(const cg_gather *g, const cg_flat *f, int m);
/* Floats of one thread's scratch for cg_dot_image. */
size_t cg_dot_slot(const cg_gather *g, const cg_flat *f, int m);
/* Adds image b's part of dW (m x R, row stride ldc) into c, with roff the
 * rows' offsets into the padded image and slot cg_dot_slot floats. */
void cg_dot_image(const cg_gather *g, const cg_flat *f, const cg_scatter *dy,
                  int m, const long *roff, float *slot, float *c, long ldc,
                  int b);

/* Floats of an image's dy stream: its wide columns, whole vectors. */
long cg_stream_len(const cg_flat *f);
/* dy of image b on the wide grid: mrows rows of cg_stream_len floats, the
 * first m channels of dy, zero elsewhere (padding columns, rows >= m). */
void cg_pad_dy(const cg_gather *g, const cg_flat *f, const cg_scatter *dy,
               int m, int mrows, int b, float *d);
/* Floats of one thread's scratch for cg_tdeep_image. */
size_t cg_tdeep_slot(const cg_gather *g, const cg_flat *f, int m);
/* Adds image b's part of dW into c (mpad x R rounded to NR, row stride
 * ldc) by outer products over the padded streams, transposed into packed
 * slivers 4 x 4 at a time (convgemm_tdeep.c). */
void cg_tdeep_image(const cg_gather *g, const cg_flat *f, const cg_scatter *dy,
                    int m, const long *roff, float *slot, float *c, long ldc,
                    int b);

/* Floats cg_deep needs for up to threads threads. */
size_t cg_deep_workspace(const cg_gather *g, int m, int threads);

#pragma omp end declare target

#ifdef __cplusplus
}
#endif

#endif /* DNNK_CONVGEMM_H */
