/* convGemm's register kernel: the GEMM micro-kernel's loop, instantiated for
 * full MR-row tiles and for 6, 4, 2 and 1 rows, so layers with few output
 * channels (LeNet: 6, and 1 for the first layer's data gradient) do not
 * compute mostly padding. The tile goes to memory (acc) because convGemm
 * scatters it into a tensor instead of a matrix. */
#include "convgemm.h"

#pragma omp declare target

#if defined(__GNUC__) && !defined(DNNK_PLAIN_MICRO)

/* Vectors per row of the tile. */
#define CG_NV (DNNK_NR / DNNK_VLEN)

/* rows x NR product; rows is a constant at every call, so it unrolls. */
CG_WIDE static inline __attribute__((always_inline)) void
product(const int rows, int kc, const float *restrict ap,
        const float *restrict bp, float *restrict acc) {
  cg_vf c[DNNK_MR][CG_NV];
  for (int i = 0; i < rows; ++i)
    for (int v = 0; v < CG_NV; ++v)
      c[i][v] = (cg_vf){0};
  for (int p = 0; p < kc; ++p) {
    cg_vf b[CG_NV];
    for (int v = 0; v < CG_NV; ++v)
      b[v] = *(const cg_vf *)(bp + p * DNNK_NR + v * DNNK_VLEN);
    const float *a = ap + p * rows;
    for (int i = 0; i < rows; ++i) {
      float ai = a[i];
      for (int v = 0; v < CG_NV; ++v)
        c[i][v] += ai * b[v];
    }
  }
  for (int i = 0; i < rows; ++i)
    for (int v = 0; v < CG_NV; ++v)
      *(cg_vf *)(acc + i * DNNK_NR + v * DNNK_VLEN) = c[i][v];
}

/* rows x NR product with B read in place: depth step p's row starts at
 * base + roff[p] (a padded image), no packed sliver. */
CG_WIDE static inline __attribute__((always_inline)) void
product_rows(const int rows, int kc, const float *restrict ap,
             const float *restrict base, const long *restrict roff,
             float *restrict acc) {
  cg_vf c[DNNK_MR][CG_NV];
  for (int i = 0; i < rows; ++i)
    for (int v = 0; v < CG_NV; ++v)
      c[i][v] = (cg_vf){0};
  for (int p = 0; p < kc; ++p) {
    const float *bp = base + roff[p];
    cg_vf b[CG_NV];
    for (int v = 0; v < CG_NV; ++v)
      b[v] = *(const cg_vf *)(bp + v * DNNK_VLEN);
    const float *a = ap + p * rows;
    for (int i = 0; i < rows; ++i) {
      float ai = a[i];
      for (int v = 0; v < CG_NV; ++v)
        c[i][v] += ai * b[v];
    }
  }
  for (int i = 0; i < rows; ++i)
    for (int v = 0; v < CG_NV; ++v)
      *(cg_vf *)(acc + i * DNNK_NR + v * DNNK_VLEN) = c[i][v];
}

/* One row (a single input channel's data gradient): with 3 accumulators
 * every FMA would wait for the previous one, so 4 depth steps go to 4
 * separate sets, added at the end. b(p) gives depth step p's B row. */
#define CG_ONE_ROW(B_ROW)                                                      \
  cg_vf c[4][CG_NV];                                                           \
  for (int u = 0; u < 4; ++u)                                                  \
    for (int v = 0; v < CG_NV; ++v)                                            \
      c[u][v] = (cg_vf){0};                                                    \
  int p = 0;                                                                   \
  for (; p + 4 <= kc; p += 4)                                                  \
    for (int u = 0; u < 4; ++u) {                                              \
      const float *bp = B_ROW(p + u);                                          \
      for (int v = 0; v < CG_NV; ++v)                                          \
        c[u][v] += ap[p + u] * *(const cg_vf *)(bp + v * DNNK_VLEN);           \
    }                                                                          \
  for (; p < kc; ++p) {                                                        \
    const float *bp = B_ROW(p);                                                \
    for (int v = 0; v < CG_NV; ++v)                                            \
      c[0][v] += ap[p] * *(const cg_vf *)(bp + v * DNNK_VLEN);                 \
  }                                                                            \
  for (int v = 0; v < CG_NV; ++v)                                              \
    *(cg_vf *)(acc + v * DNNK_VLEN) = (c[0][v] + c[1][v]) + (c[2][v] + c[3][v]);

/* Depth step p's row of a packed sliver. */
#define CG_PACKED_ROW(p) (bp0 + (p)*DNNK_NR)
/* Depth step p's row read in place. */
#define CG_INPLACE_ROW(p) (base + roff[p])

/* 1 x NR product of packed slivers. */
CG_WIDE static void product_one(int kc, const float *restrict ap,
                                const float *restrict bp0,
                                float *restrict acc){CG_ONE_ROW(CG_PACKED_ROW)}

/* 1 x NR product with B read in place. */
CG_WIDE static void product_one_rows(int kc, const float *restrict ap,
                                     const float *restrict base,
                                     const long *restrict roff,
                                     float *restrict acc) {
  CG_ONE_ROW(CG_INPLACE_ROW)
}

#else

/* rows x NR product with B read in place, plain loops. */
static inline void product_rows(const int rows, int kc,
                                const float *restrict ap,
                                const float *restrict base,
                                const long *restrict roff,
                                float *restrict acc) {
  for (int i = 0; i < rows * DNNK_NR; ++i)
    acc[i] = 0.0f;
  for (int p = 0; p < kc; ++p)
    for (int i = 0; i < rows; ++i) {
      float ai = ap[p * rows + i];
#pragma omp simd
      for (int j = 0; j < DNNK_NR; ++j)
        acc[i * DNNK_NR + j] += ai * base[roff[p] + j];
    }
}

/* rows x NR product, plain loops (fallback for other compilers). */
static inline void product(const int rows, int kc, const float *restrict ap,
                           const float *restrict bp, float *restrict acc) {
  for (int i = 0; i < rows * DNNK_NR; ++i)
    acc[i] = 0.0f;
  for (int p = 0; p < kc; ++p)
    for (int i = 0; i < rows; ++i) {
      float ai = ap[p * rows + i];
#pragma omp simd
      for (int j = 0; j < DNNK_NR; ++j)
        acc[i * DNNK_NR + j] += ai * bp[p * DNNK_NR + j];
    }
}

/* 1 x NR product of packed slivers, plain loops. */
static void product_one(int kc, const float *ap, const float *bp, float *acc) {
  product(1, kc, ap, bp, acc);
}

/* 1 x NR product with B read in place, plain loops. */
static void product_one_rows(int kc, const float *ap, const float *base,
                             const long *roff, float *acc) {
  product_rows(1, kc, ap, base, roff, acc);
}
#endif

CG_WIDE void cg_micro(int rows, int kc, const float *ap, const float *bp,
                      float *acc) {
  if (rows == DNNK_MR)
    product(DNNK_MR, kc, ap, bp, acc);
#if DNNK_MR > 6
  else if (rows == 6)
    product(6, kc, ap, bp, acc);
#endif
#if DNNK_MR > 4
  else if (rows == 4)
    product(4, kc, ap, bp, acc);
#endif
  else if (rows == 2)
    product(2, kc, ap, bp, acc);
  else
    product_one(kc, ap, bp, acc);
}

CG_WIDE void cg_micro_rows(int rows, int kc, const float *ap, const float *base,
                           const long *roff, float *acc) {
  if (rows == DNNK_MR)
    product_rows(DNNK_MR, kc, ap, base, roff, acc);
#if DNNK_MR > 6
  else if (rows == 6)
    product_rows(6, kc, ap, base, roff, acc);
#endif
#if DNNK_MR > 4
  else if (rows == 4)
    product_rows(4, kc, ap, base, roff, acc);
#endif
  else if (rows == 2)
    product_rows(2, kc, ap, base, roff, acc);
  else
    product_one_rows(kc, ap, base, roff, acc);
}

int cg_tile_rows(int m) {
  if (m >= DNNK_MR || m > 6 || (m > 4 && DNNK_MR <= 6))
    return DNNK_MR;
  return m > 4 ? 6 : m > 2 ? 4 : m > 1 ? 2 : 1;
}

#pragma omp end declare target
