/* Pieces of the packed GEMM shared between its translation units. */
#ifndef DNNK_GEMM_INTERNAL_H
#define DNNK_GEMM_INTERNAL_H

#include "gemm_config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Declared for the device too: the driver calls them inside target regions. */
#pragma omp declare target

/* How the micro-kernel combines its product with the existing C tile. */
enum dnnk_store_mode {
  DNNK_STORE_SET = 0,   /* C = AB: beta is 0, C is never read (may hold NaN). */
  DNNK_STORE_ADD = 1,   /* C += AB: later K panels, or beta == 1. */
  DNNK_STORE_SCALE = 2, /* C = beta * C + AB: first K panel, general beta. */
};

/* dst[p * ld + i] = alpha * s[i][p] for i < 4, p < kc (4 x 4 shuffles). */
void dnnk_transpose4(const float *const *s, int kc, float alpha, float *dst,
                     long ld);

/* Packs rows [0, mc) x depth [0, kc) of op(A) scaled by alpha into MR-row
 * slivers, zero-padding the last sliver; a points at op(A)(0, 0). */
void dnnk_gemm_pack_a(int trans, int mc, int kc, float alpha, const float *a,
                      int lda, float *packed);

/* Packs depth [0, kc) x columns [first, first + count slivers) of op(B) into
 * NR-column slivers of a panel nc wide; b points at op(B)(0, 0). */
void dnnk_gemm_pack_b(int trans, int kc, int nc, int first, int count,
                      const float *b, int ldb, float *packed);

/* C tile (mr x nr, mr <= MR, nr <= NR) op= packed A sliver x packed B
 * sliver over depth kc, combined according to mode. */
void dnnk_gemm_micro(int kc, const float *ap, const float *bp, float *c,
                     int ldc, int mr, int nr, int mode, float beta);

/* Rows of A slivers the narrow kernel takes at once: as many as a full
 * tile has vectors per row, so that it holds as many accumulators. */
#define DNNK_NARROW_SLIVERS (DNNK_NR / DNNK_VLEN)

/* The last column sliver when it is at most one vector wide (nr <= VLEN):
 * C rows [0, mr) op= NARROW_SLIVERS consecutive packed A slivers (a_step
 * floats apart) x that B sliver. Per row of A a full tile's loads would feed
 * only MR products; NARROW_SLIVERS times the rows keep the FMA units busy. */
void dnnk_gemm_micro_narrow(int kc, const float *ap, long a_step, long lda,
                            const float *bp, float *c, int ldc, int mr, int nr,
                            int mode, float beta);

/* As dnnk_gemm_micro, with A read in place (alpha 1, not transposed): row i
 * of the tile at ap + i * lda, depth contiguous; rows past mr are not read.
 * For the narrow kernel lda != 0 means the same (its a_step is then unused). */
void dnnk_gemm_micro_rows(int kc, const float *ap, long lda, const float *bp,
                          float *c, int ldc, int mr, int nr, int mode,
                          float beta);

#pragma omp end declare target

#ifdef __cplusplus
}
#endif

#endif /* DNNK_GEMM_INTERNAL_H */
