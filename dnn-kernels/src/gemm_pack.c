/* Packing of A and B into the contiguous slivers the micro-kernel streams.
 * Packing makes every micro-kernel load unit-stride whatever the transposes
 * and leading dimensions, and it is where alpha is applied (once per element
 * instead of once per use). */
#include "gemm_internal.h"

#pragma omp declare target

void dnnk_gemm_pack_a(int trans, int mc, int kc, float alpha, const float *a,
                      int lda, float *packed) {
  for (int s = 0; s < mc; s += DNNK_MR) {
    int rows = mc - s < DNNK_MR ? mc - s : DNNK_MR;
    float *dst = packed + (long)s * kc;
    if (!trans) {
      /* op(A)(i, p) = a[i * lda + p]: read each row once, scatter by MR. */
      for (int i = 0; i < rows; ++i) {
        const float *src = a + (long)(s + i) * lda;
        for (int p = 0; p < kc; ++p)
          dst[p * DNNK_MR + i] = alpha * src[p];
      }
    } else {
      /* op(A)(i, p) = a[p * lda + i]: rows of a are already MR-contiguous. */
      for (int p = 0; p < kc; ++p) {
        const float *src = a + (long)p * lda + s;
#pragma omp simd
        for (int i = 0; i < rows; ++i)
          dst[p * DNNK_MR + i] = alpha * src[i];
      }
    }
    /* Zero rows beyond mc so the micro-kernel can always run full tiles. */
    for (int i = rows; i < DNNK_MR; ++i)
      for (int p = 0; p < kc; ++p)
        dst[p * DNNK_MR + i] = 0.0f;
  }
}

void dnnk_gemm_pack_b(int trans, int kc, int nc, int first, int count,
                      const float *b, int ldb, float *packed) {
  for (int t = first; t < first + count; ++t) {
    int j0 = t * DNNK_NR;
    int cols = nc - j0 < DNNK_NR ? nc - j0 : DNNK_NR;
    float *dst = packed + (long)j0 * kc;
    if (!trans) {
      /* op(B)(p, j) = b[p * ldb + j]: copy NR-wide row segments. */
      for (int p = 0; p < kc; ++p) {
        const float *src = b + (long)p * ldb + j0;
        if (cols == DNNK_NR) {
#pragma omp simd
          for (int j = 0; j < DNNK_NR; ++j)
            dst[p * DNNK_NR + j] = src[j];
        } else {
          for (int j = 0; j < DNNK_NR; ++j)
            dst[p * DNNK_NR + j] = j < cols ? src[j] : 0.0f;
        }
      }
    } else {
      /* op(B)(p, j) = b[j * ldb + p]: walk each source row contiguously. */
      for (int j = 0; j < cols; ++j) {
        const float *src = b + (long)(j0 + j) * ldb;
        for (int p = 0; p < kc; ++p)
          dst[p * DNNK_NR + j] = src[p];
      }
      for (int j = cols; j < DNNK_NR; ++j)
        for (int p = 0; p < kc; ++p)
          dst[p * DNNK_NR + j] = 0.0f;
    }
  }
}

#pragma omp end declare target
