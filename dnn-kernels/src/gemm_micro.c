/* The register-blocked inner kernel of the GEMM.
 *
 * It is written with GCC/Clang generic vectors (`vector_size`), which are
 * ISA-neutral: the same source becomes AVX-512, AVX2, SSE or NEON code. Plain
 * loops over a float acc[MR][NR] are kept as the fallback for other compilers,
 * but clang 14 does not vectorise them reliably: it fully unrolls the row loop
 * before the loop vectoriser runs, after which the SLP vectoriser either
 * vectorises across rows (broadcasting the wrong operand) or spills the tile;
 * measured 5-75 GFLOP/s per core on AVX-512 depending on MR, and scalar code
 * on AArch64, versus a steady 175 GFLOP/s with generic vectors. */
#include <string.h>

#include "gemm_internal.h"

#pragma omp declare target

#if defined(__GNUC__) && !defined(DNNK_PLAIN_MICRO)

/* One vector register of floats; aligned(4) allows unaligned access to C. */
typedef float dnnk_vf
    __attribute__((vector_size(DNNK_VLEN * sizeof(float)), aligned(4)));

/* Vectors per row of the C tile. */
#define DNNK_NV (DNNK_NR / DNNK_VLEN)

/* Clang tunes AVX-512 parts for 256-bit vectors and would split each 512-bit
 * generic vector in two; min_vector_width keeps them whole in this kernel
 * only (a per-function -mprefer-vector-width=512, which, as a command-line
 * flag, also breaks clang 14's x86_64 offload images). */
#if defined(__clang__) && DNNK_VLEN * 32 >= 512
#define DNNK_WIDE __attribute__((min_vector_width(DNNK_VLEN * 32)))
#else
#define DNNK_WIDE
#endif

/* Prefetches (for writing) the nr floats of one C tile row. */
static inline void prefetch_c_row(const float *row, int nr) {
  for (int j = 0; j < nr; j += 16) /* 64-byte lines */
    __builtin_prefetch(row + j, 1, 3);
  __builtin_prefetch(row + nr - 1, 1, 3);
}

/* *c = x, *c += x or *c = beta * *c + x, as the store mode says. */
DNNK_WIDE static inline __attribute__((always_inline)) void
store_vec(dnnk_vf *c, dnnk_vf x, int mode, float beta) {
  if (mode == DNNK_STORE_SET)
    *c = x;
  else if (mode == DNNK_STORE_ADD)
    *c += x;
  else
    *c = beta * *c + x;
}

/* The same for one float. */
static inline void store_float(float *c, float x, int mode, float beta) {
  if (mode == DNNK_STORE_SET)
    *c = x;
  else if (mode == DNNK_STORE_ADD)
    *c += x;
  else
    *c = beta * *c + x;
}

/* One depth step over the first nv vectors of the tile's rows. */
#define DNNK_MICRO_STEP(p, nv)                                                 \
  do {                                                                         \
    dnnk_vf b_[DNNK_NV];                                                       \
    for (int v = 0; v < (nv); ++v)                                             \
      b_[v] = *(const dnnk_vf *)(bp + (p)*DNNK_NR + v * DNNK_VLEN);            \
    const float *a_ = ap + (p)*DNNK_MR;                                        \
    for (int i = 0; i < DNNK_MR; ++i) {                                        \
      /* broadcast by the scalar-vector product */                             \
      float ai = direct ? row[i][p] : a_[i];                                   \
      for (int v = 0; v < (nv); ++v)                                           \
        acc[i][v] += ai * b_[v];                                               \
    }                                                                          \
  } while (0)

/* C tile (mr x nr) op= A sliver x B sliver, computing only the nv vectors
 * of each row that reach column nr (nv is a constant once inlined, so the
 * accumulators stay in registers). C's lines are prefetched during the first
 * depth steps: they come from L3 or memory, and without it the tile's stores
 * stalled the kernel (square 2048 on one core: 163 -> 190 GFLOP/s). */
DNNK_WIDE static inline __attribute__((always_inline)) void
micro_tile(int nv, int direct, long lda, int kc, const float *restrict ap,
           const float *restrict bp, float *c, int ldc, int mr, int nr,
           int mode, float beta) {
  /* Direct: row i of A at ap + i * lda (rows past mr read row mr - 1). */
  const float *row[DNNK_MR];
  for (int i = 0; i < DNNK_MR; ++i)
    row[i] = ap + (i < mr ? i : mr - 1) * lda;
  dnnk_vf acc[DNNK_MR][DNNK_NV];
  for (int i = 0; i < DNNK_MR; ++i)
    for (int v = 0; v < nv; ++v)
      acc[i][v] = (dnnk_vf){0};
  /* In deep slices C's rows are prefetched one every few steps: issued all
   * at once they stalled the kernel (likely by taking the line-fill buffers
   * that the B sliver's loads from L2 need too). */
  int pf_every = kc / (2 * DNNK_MR);
  if (pf_every > 16)
    pf_every = 16;
  if (pf_every < 1)
    pf_every = 1;
  int p = 0;
  if (pf_every == 1) {
    for (; p < kc && p < DNNK_MR; ++p) {
      if (p < mr)
        prefetch_c_row(c + (long)p * ldc, nr);
      DNNK_MICRO_STEP(p, nv);
    }
  } else {
    for (int i = 0; i < mr && p < kc; ++i) {
      prefetch_c_row(c + (long)i * ldc, nr);
      for (int end = p + pf_every < kc ? p + pf_every : kc; p < end; ++p)
        DNNK_MICRO_STEP(p, nv);
    }
  }
  /* Two steps per iteration: half the loop's index arithmetic. */
  for (; p + 2 <= kc; p += 2) {
    DNNK_MICRO_STEP(p, nv);
    DNNK_MICRO_STEP(p + 1, nv);
  }
  for (; p < kc; ++p)
    DNNK_MICRO_STEP(p, nv);
  if (mr == DNNK_MR && nr == nv * DNNK_VLEN) {
    /* Whole vectors: stored straight from the registers. */
    for (int i = 0; i < DNNK_MR; ++i) {
      dnnk_vf *ci = (dnnk_vf *)(c + (long)i * ldc);
      for (int v = 0; v < nv; ++v)
        store_vec(&ci[v], acc[i][v], mode, beta);
    }
    return;
  }
  /* Edge tile: through memory (constant indices above keep acc in
   * registers), then only the part inside C, whole vectors first. */
  float t[DNNK_MR][DNNK_NR];
  for (int i = 0; i < DNNK_MR; ++i)
    for (int v = 0; v < nv; ++v)
      *(dnnk_vf *)&t[i][v * DNNK_VLEN] = acc[i][v];
  int whole = nr / DNNK_VLEN * DNNK_VLEN;
  for (int i = 0; i < mr; ++i) {
    float *ci = c + (long)i * ldc;
    for (int j = 0; j < whole; j += DNNK_VLEN)
      store_vec((dnnk_vf *)(ci + j), *(const dnnk_vf *)&t[i][j], mode, beta);
    for (int j = whole; j < nr; ++j)
      store_float(&ci[j], t[i][j], mode, beta);
  }
}

/* Narrow edge tiles skip the vectors beyond nr (a 16-column remainder of a
 * 48-wide tile costs a third). */
#if DNNK_NV > 2
#define DNNK_MICRO_SWITCH(direct, lda)                                         \
  switch ((nr + DNNK_VLEN - 1) / DNNK_VLEN) {                                  \
  case 1:                                                                      \
    micro_tile(1, direct, lda, kc, ap, bp, c, ldc, mr, nr, mode, beta);        \
    return;                                                                    \
  case 2:                                                                      \
    micro_tile(2, direct, lda, kc, ap, bp, c, ldc, mr, nr, mode, beta);        \
    return;                                                                    \
  default:                                                                     \
    micro_tile(DNNK_NV, direct, lda, kc, ap, bp, c, ldc, mr, nr, mode, beta);  \
  }
#elif DNNK_NV > 1
#define DNNK_MICRO_SWITCH(direct, lda)                                         \
  if (nr <= DNNK_VLEN)                                                         \
    micro_tile(1, direct, lda, kc, ap, bp, c, ldc, mr, nr, mode, beta);        \
  else                                                                         \
    micro_tile(DNNK_NV, direct, lda, kc, ap, bp, c, ldc, mr, nr, mode, beta);
#else
#define DNNK_MICRO_SWITCH(direct, lda)                                         \
  micro_tile(DNNK_NV, direct, lda, kc, ap, bp, c, ldc, mr, nr, mode, beta);
#endif

DNNK_WIDE void dnnk_gemm_micro(int kc, const float *ap, const float *bp,
                               float *c, int ldc, int mr, int nr, int mode,
                               float beta){DNNK_MICRO_SWITCH(0, 0)}

DNNK_WIDE void dnnk_gemm_micro_rows(int kc, const float *ap, long lda,
                                    const float *bp, float *c, int ldc, int mr,
                                    int nr, int mode, float beta) {
  DNNK_MICRO_SWITCH(1, lda)
}

/* The narrow kernel's rows: NV slivers of MR, as many accumulators as a
 * full tile has. */
#define DNNK_NARROW_ROWS (DNNK_NV * DNNK_MR)

/* The narrow kernel; direct as in micro_tile (rows past mr read row mr - 1),
 * else slivers a_step floats apart. */
DNNK_WIDE static inline __attribute__((always_inline)) void
narrow_tile(int direct, long lda, int kc, const float *ap, long a_step,
            const float *bp, float *c, int ldc, int mr, int nr, int mode,
            float beta) {
  const float *row[DNNK_NARROW_ROWS];
  for (int i = 0; i < DNNK_NARROW_ROWS; ++i)
    row[i] = ap + i * lda;
  dnnk_vf acc[DNNK_NARROW_ROWS];
  for (int i = 0; i < DNNK_NARROW_ROWS; ++i)
    acc[i] = (dnnk_vf){0};
  for (int p = 0; p < kc; ++p) {
    if (p < mr)
      prefetch_c_row(c + (long)p * ldc, nr);
    dnnk_vf b = *(const dnnk_vf *)(bp + (long)p * DNNK_NR);
    for (int s = 0; s < DNNK_NV; ++s) {
      const float *a_ = ap + s * a_step + (long)p * DNNK_MR;
      for (int i = 0; i < DNNK_MR; ++i)
        acc[s * DNNK_MR + i] += (direct ? row[s * DNNK_MR + i][p] : a_[i]) * b;
    }
  }
  for (int i = 0; i < mr; ++i) {
    float *ci = c + (long)i * ldc;
    if (nr == DNNK_VLEN)
      store_vec((dnnk_vf *)ci, acc[i], mode, beta);
    else
      for (int j = 0; j < nr; ++j)
        store_float(&ci[j], acc[i][j], mode, beta);
  }
}

DNNK_WIDE void dnnk_gemm_micro_narrow(int kc, const float *ap, long a_step,
                                      long lda, const float *bp, float *c,
                                      int ldc, int mr, int nr, int mode,
                                      float beta) {
  if (lda && mr < DNNK_NARROW_ROWS) {
    /* Rows past mr do not exist: the row kernel per sliver reads none. */
    for (int i0 = 0; i0 < mr; i0 += DNNK_MR)
      dnnk_gemm_micro_rows(kc, ap + i0 * lda, lda, bp, c + (long)i0 * ldc, ldc,
                           mr - i0 < DNNK_MR ? mr - i0 : DNNK_MR, nr, mode,
                           beta);
  } else if (lda)
    narrow_tile(1, lda, kc, ap, 0, bp, c, ldc, mr, nr, mode, beta);
  else
    narrow_tile(0, 0, kc, ap, a_step, bp, c, ldc, mr, nr, mode, beta);
}

#else

/* Accumulates the full MR x NR product of two packed slivers. */
static inline void micro_product(int kc, const float *restrict ap,
                                 const float *restrict bp,
                                 float acc[DNNK_MR][DNNK_NR]) {
  for (int i = 0; i < DNNK_MR; ++i)
#pragma omp simd
    for (int j = 0; j < DNNK_NR; ++j)
      acc[i][j] = 0.0f;
  for (int p = 0; p < kc; ++p) {
    const float *a = ap + p * DNNK_MR;
    const float *b = bp + p * DNNK_NR;
    for (int i = 0; i < DNNK_MR; ++i) {
      float ai = a[i];
#pragma omp simd
      for (int j = 0; j < DNNK_NR; ++j)
        acc[i][j] += ai * b[j];
    }
  }
}

void dnnk_gemm_micro(int kc, const float *ap, const float *bp, float *c,
                     int ldc, int mr, int nr, int mode, float beta) {
  float acc[DNNK_MR][DNNK_NR];
  micro_product(kc, ap, bp, acc);
  if (mr == DNNK_MR && nr == DNNK_NR) {
    /* Full tile: constant bounds keep the stores vectorised. */
    for (int i = 0; i < DNNK_MR; ++i) {
      float *ci = c + (long)i * ldc;
      if (mode == DNNK_STORE_SET) {
        memcpy(ci, acc[i], sizeof acc[i]);
      } else if (mode == DNNK_STORE_ADD) {
#pragma omp simd
        for (int j = 0; j < DNNK_NR; ++j)
          ci[j] += acc[i][j];
      } else {
#pragma omp simd
        for (int j = 0; j < DNNK_NR; ++j)
          ci[j] = beta * ci[j] + acc[i][j];
      }
    }
    return;
  }
  /* Edge tile: only the mr x nr part that lies inside C is written. */
  for (int i = 0; i < mr; ++i) {
    float *ci = c + (long)i * ldc;
    for (int j = 0; j < nr; ++j) {
      if (mode == DNNK_STORE_SET)
        ci[j] = acc[i][j];
      else if (mode == DNNK_STORE_ADD)
        ci[j] += acc[i][j];
      else
        ci[j] = beta * ci[j] + acc[i][j];
    }
  }
}

/* Packs the rows first (at most KC or GEMM_KC deep: the drivers' slices). */
void dnnk_gemm_micro_rows(int kc, const float *ap, long lda, const float *bp,
                          float *c, int ldc, int mr, int nr, int mode,
                          float beta) {
  float sliver[(DNNK_GEMM_KC > DNNK_KC ? DNNK_GEMM_KC : DNNK_KC) * DNNK_MR];
  for (int p = 0; p < kc; ++p)
    for (int i = 0; i < DNNK_MR; ++i)
      sliver[p * DNNK_MR + i] = ap[(i < mr ? i : mr - 1) * lda + p];
  dnnk_gemm_micro(kc, sliver, bp, c, ldc, mr, nr, mode, beta);
}

void dnnk_gemm_micro_narrow(int kc, const float *ap, long a_step, long lda,
                            const float *bp, float *c, int ldc, int mr, int nr,
                            int mode, float beta) {
  for (int s = 0; s * DNNK_MR < mr; ++s) {
    int rows = mr - s * DNNK_MR < DNNK_MR ? mr - s * DNNK_MR : DNNK_MR;
    float *cs = c + (long)s * DNNK_MR * ldc;
    if (lda)
      dnnk_gemm_micro_rows(kc, ap + s * DNNK_MR * lda, lda, bp, cs, ldc, rows,
                           nr, mode, beta);
    else
      dnnk_gemm_micro(kc, ap + s * a_step, bp, cs, ldc, rows, nr, mode, beta);
  }
}

#endif

#pragma omp end declare target
