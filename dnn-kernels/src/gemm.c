/* Blocked, packed single-precision GEMM (the BLIS loop structure).
 *
 * Loops, outer to inner: NC-wide column panels of C; KC-deep slices of the
 * product, whose B panel is packed once and shared by all threads; MC-tall
 * blocks of A packed into L2-sized buffers; then the grid of MR x NR tiles,
 * distributed over the threads. One parallel region spans the whole call so
 * each phase costs a barrier, not a fork. */
#include <stdint.h>
#include <stdlib.h>

#include "alloc.h"
#include "dnnk.h"
#include "gemm_internal.h"
#include "omp_compat.h"

#pragma omp declare target

/* Below this many flops a fork and barriers cost more than they save. */
#define DNNK_GEMM_PARALLEL_FLOPS (1L << 17)

/* With fewer MR x NR tiles than this per thread, split k instead. */
#define DNNK_GEMM_SPLIT_K_TILES 8

/* Rows of C per thread from which the threads take row blocks (two per
 * thread, each at least 8 tiles tall, so that a B sliver serves several). */
#ifndef DNNK_GEMM_ROWS_MIN
#define DNNK_GEMM_ROWS_MIN (16 * DNNK_MR)
#endif

/* Columns of C per thread from which each thread takes its own columns
 * (gemm_columns) rather than row blocks against a shared B panel: each
 * thread packs all of A, which narrower shares would not amortise. */
#ifndef DNNK_GEMM_COLS_MIN
#define DNNK_GEMM_COLS_MIN (2 * DNNK_NR)
#endif

/* Most floats of A the kernels read in place (half a 1 MiB L2). */
#ifndef DNNK_GEMM_A_IN_PLACE
#define DNNK_GEMM_A_IN_PLACE (128L * 1024)
#endif

/* Smaller of two ints. */
static inline int min_int(int a, int b) { return a < b ? a : b; }
/* Larger of two ints. */
static inline int max_int(int a, int b) { return a > b ? a : b; }

/* Number of size-step blocks needed to cover n. */
static inline int blocks(int n, int step) { return (n + step - 1) / step; }

/* C = beta * C, for the degenerate k == 0 or alpha == 0 cases. */
static void scale_c(int m, int n, float beta, float *c, int ldc) {
#pragma omp parallel for if ((long)m * n > DNNK_GEMM_PARALLEL_FLOPS)
  for (int i = 0; i < m; ++i) {
    float *ci = c + (long)i * ldc;
    if (beta == 0.0f) {
#pragma omp simd
      for (int j = 0; j < n; ++j)
        ci[j] = 0.0f;
    } else {
#pragma omp simd
      for (int j = 0; j < n; ++j)
        ci[j] *= beta;
    }
  }
}

/* Depth of the slices: k split into equal slices of at most GEMM_KC (576
 * as 288 + 288, not 512 + a 64-deep slice that costs a whole pass over C). */
static inline int slice_depth(int k) {
  return blocks(k, blocks(k, DNNK_GEMM_KC));
}

/* Aligns p up to a 64-byte cache line. */
static inline float *align64(float *p) {
  return (float *)(((uintptr_t)p + 63) & ~(uintptr_t)63);
}

/* Tile (ir, jr) of an mc x nc block of C from its A block and packed B
 * panel (pb). The A block is packed (a_ld 0: MR-row slivers at pa) or read
 * in place (row i at pa + i * a_ld). A last column sliver one vector wide or
 * less goes to the narrow kernel in groups of NARROW_SLIVERS row slivers,
 * run by whoever has the group's first tile; the rest of the group then
 * returns at once. */
static void block_tile(int kc, const float *pa, long a_ld, const float *pb,
                       float *c, int ldc, int mc, int nc, int ir, int jr,
                       int mode, float beta) {
  int i0 = ir * DNNK_MR, j0 = jr * DNNK_NR, nr = min_int(DNNK_NR, nc - j0);
  const float *ap = pa + (a_ld ? i0 * a_ld : (long)i0 * kc);
  if (DNNK_NARROW_SLIVERS > 1 && nr <= DNNK_VLEN &&
      blocks(mc, DNNK_MR) - ir + ir % DNNK_NARROW_SLIVERS >=
          DNNK_NARROW_SLIVERS) {
    if (ir % DNNK_NARROW_SLIVERS == 0)
      dnnk_gemm_micro_narrow(kc, ap, (long)DNNK_MR * kc, a_ld,
                             pb + (long)j0 * kc, c + (long)i0 * ldc + j0, ldc,
                             min_int(DNNK_NARROW_SLIVERS * DNNK_MR, mc - i0),
                             nr, mode, beta);
    return;
  }
  if (a_ld)
    dnnk_gemm_micro_rows(kc, ap, a_ld, pb + (long)j0 * kc,
                         c + (long)i0 * ldc + j0, ldc,
                         min_int(DNNK_MR, mc - i0), nr, mode, beta);
  else
    dnnk_gemm_micro(kc, ap, pb + (long)j0 * kc, c + (long)i0 * ldc + j0, ldc,
                    min_int(DNNK_MR, mc - i0), nr, mode, beta);
}

/* Whether the kernels read A in place instead of packing it: A as stored
 * (alpha 1, not transposed), small enough to stay in L2 across the column
 * slivers (larger A has rows far apart that crowd L2's sets). Packing A took
 * 3% of square 256's time. */
static inline int a_in_place(int trans_a, float alpha, int m, int k) {
  return !trans_a && alpha == 1.0f && (long)m * k <= DNNK_GEMM_A_IN_PLACE;
}

/* How the first depth slice combines with C (later ones add). */
static inline int first_store_mode(float beta) {
  return beta == 0.0f   ? DNNK_STORE_SET
         : beta == 1.0f ? DNNK_STORE_ADD
                        : DNNK_STORE_SCALE;
}

/* Waits for the team, if there is one. */
static inline void team_barrier(int nt) {
  if (nt > 1) {
#pragma omp barrier
  }
}

/* [*lo, *hi): thread tid's contiguous share of count iterations. */
static inline void share(int count, int tid, int nt, int *lo, int *hi) {
  *lo = (int)((long)count * tid / nt);
  *hi = (int)((long)count * (tid + 1) / nt);
}

/* Thread tid of nt's part of the blocked loops, sharing the packing buffers.
 * The iterations are split by hand rather than with worksharing constructs:
 * with one thread these loops then make no OpenMP runtime calls (libomp's
 * static-loop set-up formats a debug string each time). */
static void blocked_loops(int trans_a, int trans_b, int m, int n, int k,
                          float alpha, const float *a, int lda, const float *b,
                          int ldb, float beta, float *c, int ldc, float *pack_a,
                          float *pack_b, int tid, int nt) {
  int first_mode = first_store_mode(beta);
  int lo, hi, direct = a_in_place(trans_a, alpha, m, k);
  int kc_step = slice_depth(k);
  for (int jc = 0; jc < n; jc += DNNK_NC) {
    int nc = min_int(DNNK_NC, n - jc);
    int n_slivers = blocks(nc, DNNK_NR);
    for (int pc = 0; pc < k; pc += kc_step) {
      int kc = min_int(kc_step, k - pc);
      int mode = pc == 0 ? first_mode : DNNK_STORE_ADD;
      const float *b_src =
          trans_b ? b + (long)jc * ldb + pc : b + (long)pc * ldb + jc;
      /* (the previous panel's tiles are done: the barrier ending them) */
      share(n_slivers, tid, nt, &lo, &hi);
      if (hi > lo)
        dnnk_gemm_pack_b(trans_b, kc, nc, lo, hi - lo, b_src, ldb, pack_b);
      team_barrier(nt);
      for (int ic = 0; ic < m; ic += DNNK_MC) {
        int mc = min_int(DNNK_MC, m - ic);
        int m_slivers = blocks(mc, DNNK_MR);
        if (!direct) {
          share(m_slivers, tid, nt, &lo, &hi);
          for (int s = lo; s < hi; ++s) {
            int i0 = ic + s * DNNK_MR;
            const float *a_src =
                trans_a ? a + (long)pc * lda + i0 : a + (long)i0 * lda + pc;
            dnnk_gemm_pack_a(trans_a, min_int(DNNK_MR, m - i0), kc, alpha,
                             a_src, lda, pack_a + (long)s * DNNK_MR * kc);
          }
          team_barrier(nt);
        }
        const float *a_blk = direct ? a + (long)ic * lda + pc : pack_a;
        /* jr outer: each thread keeps its few B slivers hot in L1 while the
         * A block is read from L2. */
        share(n_slivers * m_slivers, tid, nt, &lo, &hi);
        for (int t = lo; t < hi; ++t) {
          block_tile(kc, a_blk, direct ? lda : 0, pack_b,
                     c + (long)ic * ldc + jc, ldc, mc, nc, t % m_slivers,
                     t / m_slivers, mode, beta);
        }
        /* The A block and B panel are reused only when every tile is done. */
        team_barrier(nt);
      }
    }
  }
}

/* The blocked GEMM proper (k > 0); parallel says whether it may fork. */
static void gemm_blocked(int trans_a, int trans_b, int m, int n, int k,
                         float alpha, const float *a, int lda, const float *b,
                         int ldb, float beta, float *c, int ldc, int parallel) {
  int kc_max = slice_depth(k);
  int mc_max = blocks(min_int(m, DNNK_MC), DNNK_MR) * DNNK_MR;
  int nc_max = blocks(min_int(n, DNNK_NC), DNNK_NR) * DNNK_NR;
  long a_size = (long)mc_max * kc_max, b_size = (long)nc_max * kc_max;
  /* One allocation per call: packing buffers are shared by the threads. */
  float *raw = (float *)dnnk_alloc(
      (size_t)(a_size + b_size + 32) * sizeof(float), "sgemm: packing buffers");
  float *pack_a = align64(raw);
  float *pack_b = align64(pack_a + a_size);
  if (parallel) {
#pragma omp parallel
    blocked_loops(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c,
                  ldc, pack_a, pack_b, omp_get_thread_num(),
                  omp_get_num_threads());
  } else {
    blocked_loops(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c,
                  ldc, pack_a, pack_b, 0, 1);
  }
  free(raw);
}

/* The parallel GEMM for C with many rows (square and long-m shapes): the
 * threads share each KC x NC packed B panel, packed cooperatively into one
 * of two buffers, and take row blocks of C dynamically, each packing its own
 * A block. One barrier per panel (the double buffer makes it both "panel
 * packed" and "previous panel no longer read"), instead of three phases per
 * MC block each waiting for the slowest thread: a preempted thread delays
 * the others only until they have taken the remaining blocks. Same slices,
 * same order of sums per tile as gemm_blocked. */
static void gemm_rows(int trans_a, int trans_b, int m, int n, int k,
                      float alpha, const float *a, int lda, const float *b,
                      int ldb, float beta, float *c, int ldc, int threads) {
  int kc_max = slice_depth(k);
  /* Row blocks: at most MC, at least two per thread, and a multiple of the
   * threads in number, of equal height (blocks of MC and a short last one
   * left one thread idle for up to a block per panel: 0.93x at 1024). */
  int wanted = blocks(blocks(m, DNNK_MC), threads) * threads;
  if (wanted < 2 * threads)
    wanted = 2 * threads;
  int mb = blocks(blocks(m, wanted), DNNK_MR) * DNNK_MR;
  int row_blocks = blocks(m, mb); /* rounding mb up may leave fewer */
  int nc_max = blocks(min_int(n, DNNK_NC), DNNK_NR) * DNNK_NR;
  long a_size = (long)mb * kc_max + 16, b_size = (long)nc_max * kc_max + 16;
  float *raw = (float *)malloc((size_t)(a_size * threads + 2 * b_size + 16) *
                               sizeof(float));
  /* Two work counters per panel: its B slivers and its row blocks. */
  long *counters = (long *)calloc(
      2 * (size_t)blocks(n, DNNK_NC) * blocks(k, kc_max), sizeof(long));
  if (!raw || !counters) {
    free(raw);
    free(counters);
    gemm_blocked(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                 1);
    return;
  }
  int first_mode = first_store_mode(beta);
  int direct = a_in_place(trans_a, alpha, m, k);
#pragma omp parallel num_threads(threads)
  {
    float *pack_a = align64(raw + (long)omp_get_thread_num() * a_size);
    int panel = 0;
    for (int jc = 0; jc < n; jc += DNNK_NC) {
      int nc = min_int(DNNK_NC, n - jc);
      int n_slivers = blocks(nc, DNNK_NR);
      for (int pc = 0; pc < k; pc += kc_max, ++panel) {
        int kc = min_int(kc_max, k - pc);
        int mode = pc == 0 ? first_mode : DNNK_STORE_ADD;
        float *pack_b =
            align64(raw + (long)threads * a_size + (panel & 1) * b_size);
        const float *b_src =
            trans_b ? b + (long)jc * ldb + pc : b + (long)pc * ldb + jc;
        for (int t; (t = (int)dnnk_claim(&counters[2 * panel])) < n_slivers;)
          dnnk_gemm_pack_b(trans_b, kc, nc, t, 1, b_src, ldb, pack_b);
#pragma omp barrier
        for (int rb;
             (rb = (int)dnnk_claim(&counters[2 * panel + 1])) < row_blocks;) {
          int ic = rb * mb, mc = min_int(mb, m - ic);
          const float *a_src =
              trans_a ? a + (long)pc * lda + ic : a + (long)ic * lda + pc;
          if (!direct)
            dnnk_gemm_pack_a(trans_a, mc, kc, alpha, a_src, lda, pack_a);
          int m_slivers = blocks(mc, DNNK_MR);
          for (int jr = 0; jr < n_slivers; ++jr)
            for (int ir = 0; ir < m_slivers; ++ir)
              block_tile(kc, direct ? a_src : pack_a, direct ? lda : 0, pack_b,
                         c + (long)ic * ldc + jc, ldc, mc, nc, ir, jr, mode,
                         beta);
        }
      }
    }
  }
  free(counters);
  free(raw);
}

/* The parallel GEMM for C with many rows and columns: each thread computes
 * its own columns of C whole, as the one-thread GEMM would (the same tiles,
 * slices and sums), packing its part of B and all of A itself, and no
 * thread waits for another (faster than gemm_rows at every square size on
 * two threads: dnn-kernels/README.md). */
static void gemm_columns(int trans_a, int trans_b, int m, int n, int k,
                         float alpha, const float *a, int lda, const float *b,
                         int ldb, float beta, float *c, int ldc, int threads) {
#pragma omp parallel num_threads(threads)
  {
    int t = omp_get_thread_num(), nt = omp_get_num_threads();
    /* Shares of whole vectors, not slivers: 2048 as 1008 + 1040 columns
     * kept one thread 3% longer. The sums per element stay the same. */
    int vectors = blocks(n, DNNK_VLEN);
    int lo = (int)((long)vectors * t / nt) * DNNK_VLEN;
    int hi = min_int(n, (int)((long)vectors * (t + 1) / nt) * DNNK_VLEN);
    if (hi > lo)
      gemm_blocked(trans_a, trans_b, m, hi - lo, k, alpha, a, lda,
                   trans_b ? b + (long)lo * ldb : b + lo, ldb, beta, c + lo,
                   ldc, 0);
  }
}

/* Splits the depth k over the threads when C has too few tiles to occupy
 * them (the backward-weights shapes: a small k x c*kh*kw result summed over
 * n*oh*ow): thread 0 accumulates into C, the others into private copies,
 * which are then added to C in parallel. The summation order then depends
 * on the thread count; results stay within normal float error. */
static void gemm_split_k(int trans_a, int trans_b, int m, int n, int k,
                         float alpha, const float *a, int lda, const float *b,
                         int ldb, float beta, float *c, int ldc, int threads) {
  long mn = (long)m * n;
  float *partial = (float *)malloc(sizeof(float) * mn * (threads - 1));
  if (!partial) {
    gemm_blocked(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                 1);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    int t = omp_get_thread_num(), nt = omp_get_num_threads();
    /* Chunk boundaries on KC multiples keep every chunk's panels full. */
    int chunks = blocks(k, DNNK_KC);
    int k0 = (int)((long)chunks * t / nt) * DNNK_KC;
    int k1 = min_int(k, (int)((long)chunks * (t + 1) / nt) * DNNK_KC);
    const float *ap = trans_a ? a + (long)k0 * lda : a + k0;
    const float *bp = trans_b ? b + k0 : b + (long)k0 * ldb;
    if (t == 0)
      gemm_blocked(trans_a, trans_b, m, n, k1 - k0, alpha, ap, lda, bp, ldb,
                   beta, c, ldc, 0);
    else if (k1 > k0)
      gemm_blocked(trans_a, trans_b, m, n, k1 - k0, alpha, ap, lda, bp, ldb,
                   0.0f, partial + (t - 1) * mn, n, 0);
    else
      for (long i = 0; i < mn; ++i)
        partial[(t - 1) * mn + i] = 0.0f;
#pragma omp barrier
#pragma omp for schedule(static)
    for (int i = 0; i < m; ++i)
      for (int s = 1; s < nt; ++s) {
        const float *src = partial + (s - 1) * mn + (long)i * n;
        float *dst = c + (long)i * ldc;
#pragma omp simd
        for (int j = 0; j < n; ++j)
          dst[j] += src[j];
      }
  }
  free(partial);
}

void dnnk_sgemm(int trans_a, int trans_b, int m, int n, int k, float alpha,
                const float *a, int lda, const float *b, int ldb, float beta,
                float *c, int ldc) {
  /* As BLAS's xerbla: an argument out of range names itself and stops. */
  const char *bad =
      (trans_a != DNNK_NO_TRANS && trans_a != DNNK_TRANS)
          ? "trans_a is neither DNNK_NO_TRANS nor DNNK_TRANS"
      : (trans_b != DNNK_NO_TRANS && trans_b != DNNK_TRANS)
          ? "trans_b is neither DNNK_NO_TRANS nor DNNK_TRANS"
      : m < 0 || n < 0 || k < 0           ? "m, n or k is negative"
      : lda < max_int(1, trans_a ? m : k) ? "lda is below the row length of A"
      : ldb < max_int(1, trans_b ? k : n) ? "ldb is below the row length of B"
      : ldc < max_int(1, n)               ? "ldc is below n"
                                          : NULL;
  if (bad)
    dnnk_fail("dnnk_sgemm", bad);
  if (m == 0 || n == 0)
    return;
  if (k <= 0 || alpha == 0.0f) {
    if (beta != 1.0f)
      scale_c(m, n, beta, c, ldc);
    return;
  }
  int parallel = (double)m * n * k > DNNK_GEMM_PARALLEL_FLOPS;
  int threads = parallel && !omp_in_parallel() ? omp_get_max_threads() : 1;
  long tiles = (long)blocks(m, DNNK_MR) * blocks(n, DNNK_NR);
  /* Few tiles but a long reduction: parallelise over k instead. */
  if (threads > 1 && tiles < DNNK_GEMM_SPLIT_K_TILES * threads &&
      k >= 2 * DNNK_KC * threads)
    gemm_split_k(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                 threads);
  else if (threads > 1 && m >= DNNK_GEMM_ROWS_MIN * threads) {
    if (n >= DNNK_GEMM_COLS_MIN * threads)
      gemm_columns(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c,
                   ldc, threads);
    else
      gemm_rows(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                threads);
  } else
    gemm_blocked(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                 threads > 1);
}

#pragma omp end declare target
