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

/* Smaller of two ints. */
static inline int min_int(int a, int b) { return a < b ? a : b; }

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

/* Aligns p up to a 64-byte cache line. */
static inline float *align64(float *p) {
  return (float *)(((uintptr_t)p + 63) & ~(uintptr_t)63);
}

/* The blocked GEMM proper (k > 0); parallel says whether it may fork. */
static void gemm_blocked(int trans_a, int trans_b, int m, int n, int k,
                         float alpha, const float *a, int lda, const float *b,
                         int ldb, float beta, float *c, int ldc, int parallel) {
  int kc_max = min_int(k, DNNK_KC);
  int mc_max = blocks(min_int(m, DNNK_MC), DNNK_MR) * DNNK_MR;
  int nc_max = blocks(min_int(n, DNNK_NC), DNNK_NR) * DNNK_NR;
  long a_size = (long)mc_max * kc_max, b_size = (long)nc_max * kc_max;
  /* One allocation per call: packing buffers are shared by the threads. */
  float *raw = (float *)dnnk_alloc(
      (size_t)(a_size + b_size + 32) * sizeof(float), "sgemm: packing buffers");
  float *pack_a = align64(raw);
  float *pack_b = align64(pack_a + a_size);
  int first_mode = beta == 0.0f   ? DNNK_STORE_SET
                   : beta == 1.0f ? DNNK_STORE_ADD
                                  : DNNK_STORE_SCALE;
#pragma omp parallel if (parallel)
  for (int jc = 0; jc < n; jc += DNNK_NC) {
    int nc = min_int(DNNK_NC, n - jc);
    int n_slivers = blocks(nc, DNNK_NR);
    for (int pc = 0; pc < k; pc += DNNK_KC) {
      int kc = min_int(DNNK_KC, k - pc);
      int mode = pc == 0 ? first_mode : DNNK_STORE_ADD;
      const float *b_src =
          trans_b ? b + (long)jc * ldb + pc : b + (long)pc * ldb + jc;
#pragma omp for schedule(static)
      for (int t = 0; t < n_slivers; ++t)
        dnnk_gemm_pack_b(trans_b, kc, nc, t, 1, b_src, ldb, pack_b);
      for (int ic = 0; ic < m; ic += DNNK_MC) {
        int mc = min_int(DNNK_MC, m - ic);
        int m_slivers = blocks(mc, DNNK_MR);
#pragma omp for schedule(static)
        for (int s = 0; s < m_slivers; ++s) {
          int i0 = ic + s * DNNK_MR;
          const float *a_src =
              trans_a ? a + (long)pc * lda + i0 : a + (long)i0 * lda + pc;
          dnnk_gemm_pack_a(trans_a, min_int(DNNK_MR, m - i0), kc, alpha, a_src,
                           lda, pack_a + (long)s * DNNK_MR * kc);
        }
        /* jr outer: each thread keeps its few B slivers hot in L1 while the
         * A block is read from L2. */
#pragma omp for collapse(2) schedule(static)
        for (int jr = 0; jr < n_slivers; ++jr)
          for (int ir = 0; ir < m_slivers; ++ir) {
            int i0 = ir * DNNK_MR, j0 = jr * DNNK_NR;
            dnnk_gemm_micro(kc, pack_a + (long)i0 * kc, pack_b + (long)j0 * kc,
                            c + (long)(ic + i0) * ldc + jc + j0, ldc,
                            min_int(DNNK_MR, mc - i0),
                            min_int(DNNK_NR, nc - j0), mode, beta);
          }
      }
    }
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
  int kc_max = min_int(k, DNNK_KC);
  /* Row blocks: at most MC, at least two per thread. */
  int mb = blocks(blocks(m, 2 * threads), DNNK_MR) * DNNK_MR;
  mb = min_int(mb, DNNK_MC);
  int nc_max = blocks(min_int(n, DNNK_NC), DNNK_NR) * DNNK_NR;
  long a_size = (long)mb * kc_max + 16, b_size = (long)nc_max * kc_max + 16;
  float *raw = (float *)malloc((size_t)(a_size * threads + 2 * b_size + 16) *
                               sizeof(float));
  if (!raw) {
    gemm_blocked(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                 1);
    return;
  }
  int first_mode = beta == 0.0f   ? DNNK_STORE_SET
                   : beta == 1.0f ? DNNK_STORE_ADD
                                  : DNNK_STORE_SCALE;
  int row_blocks = blocks(m, mb);
#pragma omp parallel num_threads(threads)
  {
    float *pack_a = align64(raw + (long)omp_get_thread_num() * a_size);
    int panel = 0;
    for (int jc = 0; jc < n; jc += DNNK_NC) {
      int nc = min_int(DNNK_NC, n - jc);
      int n_slivers = blocks(nc, DNNK_NR);
      for (int pc = 0; pc < k; pc += DNNK_KC, ++panel) {
        int kc = min_int(DNNK_KC, k - pc);
        int mode = pc == 0 ? first_mode : DNNK_STORE_ADD;
        float *pack_b =
            align64(raw + (long)threads * a_size + (panel & 1) * b_size);
        const float *b_src =
            trans_b ? b + (long)jc * ldb + pc : b + (long)pc * ldb + jc;
#pragma omp for schedule(dynamic, 2)
        for (int t = 0; t < n_slivers; ++t)
          dnnk_gemm_pack_b(trans_b, kc, nc, t, 1, b_src, ldb, pack_b);
          /* (the implicit barrier: the panel is complete) */
#pragma omp for schedule(dynamic, 1) nowait
        for (int rb = 0; rb < row_blocks; ++rb) {
          int ic = rb * mb, mc = min_int(mb, m - ic);
          const float *a_src =
              trans_a ? a + (long)pc * lda + ic : a + (long)ic * lda + pc;
          dnnk_gemm_pack_a(trans_a, mc, kc, alpha, a_src, lda, pack_a);
          int m_slivers = blocks(mc, DNNK_MR);
          for (int jr = 0; jr < n_slivers; ++jr)
            for (int ir = 0; ir < m_slivers; ++ir) {
              int i0 = ir * DNNK_MR, j0 = jr * DNNK_NR;
              dnnk_gemm_micro(kc, pack_a + (long)i0 * kc,
                              pack_b + (long)j0 * kc,
                              c + (long)(ic + i0) * ldc + jc + j0, ldc,
                              min_int(DNNK_MR, mc - i0),
                              min_int(DNNK_NR, nc - j0), mode, beta);
            }
        }
      }
    }
  }
  free(raw);
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
  if (m <= 0 || n <= 0)
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
  else if (threads > 1 && m >= DNNK_GEMM_ROWS_MIN * threads)
    gemm_rows(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
              threads);
  else
    gemm_blocked(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                 parallel);
}

#pragma omp end declare target
