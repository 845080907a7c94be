/* Packing of A and B into the contiguous slivers the micro-kernel streams.
 * Packing makes every micro-kernel load unit-stride whatever the transposes
 * and leading dimensions, and it is where alpha is applied (once per element
 * instead of once per use). */
#include <string.h>

#include "gemm_internal.h"

#pragma omp declare target

/* dst[p * ld + i] = alpha * s[i][p] for i < 4, p < kc: a transpose 4 x 4
 * floats at a time with vector shuffles (the scalar scatter it replaces took
 * 12% of square 256's time). */
void dnnk_transpose4(const float *const *s, int kc, float alpha, float *dst,
                     long ld) {
  int p = 0;
#if defined(__clang__) && !defined(DNNK_PLAIN_MICRO)
  typedef float v4 __attribute__((vector_size(16), aligned(4)));
  for (; p + 4 <= kc; p += 4) {
    v4 a = alpha * *(const v4 *)(s[0] + p), b = alpha * *(const v4 *)(s[1] + p);
    v4 c = alpha * *(const v4 *)(s[2] + p), d = alpha * *(const v4 *)(s[3] + p);
    v4 ab0 = __builtin_shufflevector(a, b, 0, 4, 1, 5);
    v4 ab1 = __builtin_shufflevector(a, b, 2, 6, 3, 7);
    v4 cd0 = __builtin_shufflevector(c, d, 0, 4, 1, 5);
    v4 cd1 = __builtin_shufflevector(c, d, 2, 6, 3, 7);
    *(v4 *)(dst + (p + 0) * ld) = __builtin_shufflevector(ab0, cd0, 0, 1, 4, 5);
    *(v4 *)(dst + (p + 1) * ld) = __builtin_shufflevector(ab0, cd0, 2, 3, 6, 7);
    *(v4 *)(dst + (p + 2) * ld) = __builtin_shufflevector(ab1, cd1, 0, 1, 4, 5);
    *(v4 *)(dst + (p + 3) * ld) = __builtin_shufflevector(ab1, cd1, 2, 3, 6, 7);
  }
#endif
  for (; p < kc; ++p)
    for (int i = 0; i < 4; ++i)
      dst[p * ld + i] = alpha * s[i][p];
}

#if defined(__clang__) && !defined(DNNK_PLAIN_MICRO) && DNNK_VLEN >= 8
/* dst[p * ld + i] = alpha * s[i][p] for i < 8, p < kc: 8 x 8 blocks in
 * 256-bit registers, half the instructions per float of the 4 x 4 blocks
 * (packing A took 4% of square 256's time with those). */
static void transpose8(const float *const *s, int kc, float alpha, float *dst,
                       long ld) {
  typedef float v8 __attribute__((vector_size(32), aligned(4)));
  int p = 0;
  for (; p + 8 <= kc; p += 8) {
    v8 r[8], t[8], u[8];
    for (int i = 0; i < 8; ++i)
      r[i] = alpha * *(const v8 *)(s[i] + p);
    for (int i = 0; i < 8; i += 2) {
      t[i] = __builtin_shufflevector(r[i], r[i + 1], 0, 8, 1, 9, 4, 12, 5, 13);
      t[i + 1] =
          __builtin_shufflevector(r[i], r[i + 1], 2, 10, 3, 11, 6, 14, 7, 15);
    }
    for (int h = 0; h < 8; h += 4)
      for (int q = 0; q < 2; ++q) {
        u[h + 2 * q] = __builtin_shufflevector(t[h + q], t[h + q + 2], 0, 1, 8,
                                               9, 4, 5, 12, 13);
        u[h + 2 * q + 1] = __builtin_shufflevector(t[h + q], t[h + q + 2], 2, 3,
                                                   10, 11, 6, 7, 14, 15);
      }
    /* u[j] (j < 4) holds columns j and j + 4 of rows 0-3, u[j + 4] of 4-7. */
    for (int j = 0; j < 4; ++j) {
      *(v8 *)(dst + (p + j) * ld) =
          __builtin_shufflevector(u[j], u[j + 4], 0, 1, 2, 3, 8, 9, 10, 11);
      *(v8 *)(dst + (p + j + 4) * ld) =
          __builtin_shufflevector(u[j], u[j + 4], 4, 5, 6, 7, 12, 13, 14, 15);
    }
  }
  if (p < kc) {
    const float *lo[4] = {s[0] + p, s[1] + p, s[2] + p, s[3] + p};
    const float *hi[4] = {s[4] + p, s[5] + p, s[6] + p, s[7] + p};
    dnnk_transpose4(lo, kc - p, alpha, dst + p * ld, ld);
    dnnk_transpose4(hi, kc - p, alpha, dst + p * ld + 4, ld);
  }
}
#endif

/* dst[p * ld + i] = alpha * rows[i][p] for i < n, p < kc. */
static void transpose_rows(const float *const *rows, int n, int kc, float alpha,
                           float *dst, long ld) {
  int i = 0;
#if defined(__clang__) && !defined(DNNK_PLAIN_MICRO) && DNNK_VLEN >= 8
  for (; i + 8 <= n; i += 8)
    transpose8(rows + i, kc, alpha, dst + i, ld);
#endif
  for (; i + 4 <= n; i += 4)
    dnnk_transpose4(rows + i, kc, alpha, dst + i, ld);
  for (; i < n; ++i)
    for (int p = 0; p < kc; ++p)
      dst[p * ld + i] = alpha * rows[i][p];
}

void dnnk_gemm_pack_a(int trans, int mc, int kc, float alpha, const float *a,
                      int lda, float *packed) {
  for (int s = 0; s < mc; s += DNNK_MR) {
    int rows = mc - s < DNNK_MR ? mc - s : DNNK_MR;
    float *dst = packed + (long)s * kc;
    if (!trans) {
      /* op(A)(i, p) = a[i * lda + p]: transpose the rows into the sliver. */
      const float *src[DNNK_MR];
      for (int i = 0; i < rows; ++i)
        src[i] = a + (long)(s + i) * lda;
      transpose_rows(src, rows, kc, alpha, dst, DNNK_MR);
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
      /* op(B)(p, j) = b[p * ldb + j]: copy NR-wide row segments (memcpy:
       * clang 14 unrolled the simd loop into 48 scalar moves). */
      for (int p = 0; p < kc; ++p) {
        const float *src = b + (long)p * ldb + j0;
        if (cols == DNNK_NR) {
          memcpy(dst + p * DNNK_NR, src, DNNK_NR * sizeof(float));
        } else {
          memcpy(dst + p * DNNK_NR, src, cols * sizeof(float));
          memset(dst + p * DNNK_NR + cols, 0, (DNNK_NR - cols) * sizeof(float));
        }
      }
    } else {
      /* op(B)(p, j) = b[j * ldb + p]: transpose the rows into the sliver. */
      const float *src[DNNK_NR];
      for (int j = 0; j < cols; ++j)
        src[j] = b + (long)(j0 + j) * ldb;
      transpose_rows(src, cols, kc, 1.0f, dst, DNNK_NR);
      for (int j = cols; j < DNNK_NR; ++j)
        for (int p = 0; p < kc; ++p)
          dst[p * DNNK_NR + j] = 0.0f;
    }
  }
}

#pragma omp end declare target
