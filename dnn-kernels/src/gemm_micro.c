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

/* Accumulates the full MR x NR product of two packed slivers. */
DNNK_WIDE static inline void micro_product(int kc, const float *restrict ap,
                                           const float *restrict bp,
                                           float acc_out[DNNK_MR][DNNK_NR]) {
  dnnk_vf acc[DNNK_MR][DNNK_NV];
  for (int i = 0; i < DNNK_MR; ++i)
    for (int v = 0; v < DNNK_NV; ++v)
      acc[i][v] = (dnnk_vf){0};
  for (int p = 0; p < kc; ++p) {
    dnnk_vf b[DNNK_NV];
    for (int v = 0; v < DNNK_NV; ++v)
      b[v] = *(const dnnk_vf *)(bp + p * DNNK_NR + v * DNNK_VLEN);
    const float *a = ap + p * DNNK_MR;
    for (int i = 0; i < DNNK_MR; ++i) {
      float ai = a[i]; /* broadcast by the scalar-vector product */
      for (int v = 0; v < DNNK_NV; ++v)
        acc[i][v] += ai * b[v];
    }
  }
  for (int i = 0; i < DNNK_MR; ++i)
    for (int v = 0; v < DNNK_NV; ++v)
      *(dnnk_vf *)(&acc_out[i][v * DNNK_VLEN]) = acc[i][v];
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

#endif

#ifndef DNNK_WIDE
#define DNNK_WIDE
#endif

DNNK_WIDE void dnnk_gemm_micro(int kc, const float *ap, const float *bp,
                               float *c, int ldc, int mr, int nr, int mode,
                               float beta) {
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

#pragma omp end declare target
