/* The weights' gradient of large layers over padded images: dW = dY * B^T
 * with the outer-product micro-kernel, whose packed slivers are depth-major
 * ([p][lanes]) while both dy's and the image's streams run along the depth:
 * each KC-deep chunk is transposed into slivers 4 x 4 floats at a time with
 * vector shuffles (a scalar strided pack would cost more than the product). */
#include <stdint.h>

#include "convgemm.h"
#include "gemm_internal.h"

#pragma omp declare target

/* Packs lanes rows (streams starting at s[i] + q0) of depth kc into one
 * depth-major sliver of width lanes (a multiple of 4). */
static void pack_sliver(const float *const *s, long q0, int kc, int lanes,
                        float *dst) {
  for (int i0 = 0; i0 < lanes; i0 += 4) {
    const float *four[4];
    for (int i = 0; i < 4; ++i)
      four[i] = s[i0 + i] + q0;
    dnnk_transpose4(four, kc, 1.0f, dst + i0, lanes);
  }
}

size_t cg_tdeep_slot(const cg_gather *g, const cg_flat *f, int m) {
  long mpad = round_up(m, DNNK_MR), len = cg_stream_len(f);
  (void)g;
  return (size_t)f->image + (size_t)mpad * len + (size_t)mpad * DNNK_KC +
         (size_t)DNNK_KC * DNNK_NR + DNNK_MR * DNNK_NR +
         sizeof(float *) / sizeof(float) * (DNNK_NR + DNNK_MR) + 6 * 16;
}

void cg_tdeep_image(const cg_gather *g, const cg_flat *f, const cg_scatter *dy,
                    int m, const long *roff, float *slot, float *c, long ldc,
                    int b) {
  int rows = cg_rows(g);
  long mpad = round_up(m, DNNK_MR), len = cg_stream_len(f);
  float *buf = align64(slot);
  float *dyw = align64(buf + f->image);
  float *ap = align64(dyw + mpad * len);
  float *bt = align64(ap + mpad * DNNK_KC);
  const float **rp = (const float **)align64(bt + DNNK_KC * DNNK_NR);
  const float *img = cg_image(g, f, b, buf);
  cg_pad_dy(g, f, dy, m, (int)mpad, b, dyw);
  /* Chunks of near-equal depth (288 = 2 x 144, not 256 + 32). */
  long chunks = (f->cols + DNNK_KC - 1) / DNNK_KC;
  for (long ck = 0; ck < chunks; ++ck) {
    long q0 = f->cols * ck / chunks;
    int kc = (int)(f->cols * (ck + 1) / chunks - q0);
    for (long m0 = 0; m0 < mpad; m0 += DNNK_MR) {
      for (int i = 0; i < DNNK_MR; ++i)
        rp[i] = dyw + (m0 + i) * len;
      pack_sliver(rp, q0, kc, DNNK_MR, ap + m0 * kc);
    }
    for (int r0 = 0; r0 < rows; r0 += DNNK_NR) {
      /* Lanes beyond R read some valid row; their columns are dropped. */
      for (int j = 0; j < DNNK_NR; ++j)
        rp[j] = img + roff[min_l(r0 + j, rows - 1)];
      pack_sliver(rp, q0, kc, DNNK_NR, bt);
      /* Full tiles of the private result: the GEMM kernel adds in place. */
      for (long m0 = 0; m0 < m; m0 += DNNK_MR)
        dnnk_gemm_micro(kc, ap + m0 * kc, bt, c + m0 * ldc + r0, (int)ldc,
                        DNNK_MR, DNNK_NR, DNNK_STORE_ADD, 1.0f);
    }
  }
}

#pragma omp end declare target
