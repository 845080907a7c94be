/* The weights' gradient of a layer with one input channel at stride 1 (a
 * network's first layer), computed directly on NCHW tensors:
 *   dw[k][i][j] = sum over b, y, x of dy[b][k][y][x] * xp[b][y + i][x + j]
 * (xp: the image with its zero padding). As convGemm's product the result
 * is only k x kh*kw (6 x 25 on LeNet's first layer: 39% of an 8 x 48 tile)
 * over every output point. Here vectors run along an output row: for one
 * tap row, a block of channels times the kw tap columns is summed in
 * registers, each dy vector serving kw taps and each image vector a block
 * of channels; the lanes are added once per image. */
#include <stdlib.h>

#include "conv_c1.h"
#include "convgemm.h"
#include "omp_compat.h"

#pragma omp declare target

/* Accumulator vectors of a block (channels x tap columns): those of the
 * GEMM's register tile. */
#define W1_ACC (DNNK_MR * (DNNK_NR / DNNK_VLEN))

int c1_weights_applies(const dnnk_conv_desc *d, int layout) {
  return layout == DNNK_NCHW && d->c == 1 && d->stride_h == 1 &&
         d->stride_w == 1 && d->dil_h <= 1 && d->dil_w <= 1 &&
         (d->kw == 3 || d->kw == 5);
}

/* Floats of an output row rounded up to whole vectors (dy's lanes past the
 * row are zero, so the image lanes they meet add nothing). */
static long row_vectors(const dnnk_conv_desc *d) {
  return round_up(dnnk_conv_out_w(d), DNNK_VLEN);
}

/* Floats of a padded image row: every tap column's reach. */
static long image_width(const dnnk_conv_desc *d) {
  return row_vectors(d) + d->kw - 1;
}

/* Floats of the padded image: every tap row's reach. */
static long image_floats(const dnnk_conv_desc *d) {
  return (dnnk_conv_out_h(d) + d->kh - 1) * image_width(d);
}

/* Floats of the image's dy rows, each padded to whole vectors. */
static long dy_floats(const dnnk_conv_desc *d) {
  return (long)d->k * dnnk_conv_out_h(d) * row_vectors(d);
}

/* One thread's floats: the padded image and dy, and its part of dw; whole
 * cache lines, so that every slot's buffers lie at the same offsets. */
static size_t w1_slot(const dnnk_conv_desc *d) {
  return (size_t)round_up(
      image_floats(d) + dy_floats(d) + (long)d->k * d->kh * d->kw + 48, 16);
}

size_t c1_weights_workspace(const dnnk_conv_desc *d, int threads) {
  return w1_slot(d) * (size_t)(threads > 0 ? threads : 1);
}

/* Thread q's buffers in the workspace. */
typedef struct {
  float *img, *dyp, *part;
} w1_bufs;

static w1_bufs carve(const dnnk_conv_desc *d, float *ws, int q) {
  w1_bufs b;
  b.img = align64(ws + w1_slot(d) * q);
  b.dyp = align64(b.img + image_floats(d));
  b.part = align64(b.dyp + dy_floats(d));
  return b;
}

/* Image b and its dy into the thread's buffers; their zero borders and
 * lanes are already there. */
CG_NO_CALLS static void pad_image(const dnnk_conv_desc *d, const float *x,
                                  const float *dy, int b, float *img,
                                  float *dyp) {
  int oh = dnnk_conv_out_h(d), ow = dnnk_conv_out_w(d);
  long iw = image_width(d), rv = row_vectors(d);
  /* Image row r sits at padded row r + pad_h, column c at c + pad_w: at
   * stride 1 the padded image is h + 2 pad_h = oh + kh - 1 rows of
   * w + 2 pad_w = ow + kw - 1 <= iw floats. */
  for (int r = 0; r < d->h; ++r)
    copy_short(img + (r + d->pad_h) * iw + d->pad_w,
               x + ((long)b * d->h + r) * d->w, d->w);
  const float *src = dy + (long)b * d->k * oh * ow;
  for (long r = 0; r < (long)d->k * oh; ++r)
    copy_short(dyp + r * rv, src + r * ow, ow);
}

/* dw's rows [k0, k0 + kb) at tap row i, from one image: acc[k][j] sums
 * dy[k0 + k][y][x] * img[y + i][x + j] over the image's output points.
 * With constant kb and kw the loops unroll whole and acc stays in
 * registers. */
CG_WIDE static inline __attribute__((always_inline)) void
block(int kb, int kw, int oh, long rv, long iw, const float *img,
      const float *dyp, int i, float *part, int kh) {
  cg_vf acc[W1_ACC];
  for (int a = 0; a < kb * kw; ++a)
    acc[a] = (cg_vf){0};
  for (int y = 0; y < oh; ++y)
    for (long x = 0; x < rv; x += DNNK_VLEN) {
      const float *src = img + (y + i) * iw + x;
      for (int k = 0; k < kb; ++k) {
        cg_vf g = *(const cg_vf *)(dyp + ((long)k * oh + y) * rv + x);
        for (int j = 0; j < kw; ++j)
          acc[k * kw + j] += g * *(const cg_vf *)(src + j);
      }
    }
  for (int k = 0; k < kb; ++k)
    for (int j = 0; j < kw; ++j) {
      float s = 0.0f;
      for (int l = 0; l < DNNK_VLEN; ++l)
        s += acc[k * kw + j][l];
      part[((long)k * kh + i) * kw + j] += s;
    }
}

/* Blocks of W1_ACC / kw channels at a time; the last block is whole too
 * when k divides evenly, else smaller. */
#define W1_BLOCKS(KW)                                                          \
  do {                                                                         \
    enum { KB = W1_ACC / (KW) > 0 ? W1_ACC / (KW) : 1 };                       \
    int k0 = 0;                                                                \
    for (; k0 + KB <= d->k; k0 += KB)                                          \
      block(KB, KW, oh, rv, iw, img, dyp + (long)k0 * oh * rv, i,              \
            part + (long)k0 * d->kh * (KW), d->kh);                            \
    for (; k0 < d->k; ++k0)                                                    \
      block(1, KW, oh, rv, iw, img, dyp + (long)k0 * oh * rv, i,               \
            part + (long)k0 * d->kh * (KW), d->kh);                            \
  } while (0)

/* One image's contribution to the thread's part of dw. */
CG_WIDE static void image_taps(const dnnk_conv_desc *d, const float *img,
                               const float *dyp, float *part) {
  int oh = dnnk_conv_out_h(d);
  long rv = row_vectors(d), iw = image_width(d);
  for (int i = 0; i < d->kh; ++i) {
    if (d->kw == 5)
      W1_BLOCKS(5);
    else
      W1_BLOCKS(3);
  }
}

/* Sum of dy's channel k over the batch, in double (as convGemm's pass),
 * a whole plane per vector loop. */
static double channel_sum(const dnnk_conv_desc *d, const float *dy, int k) {
  long plane = (long)dnnk_conv_out_h(d) * dnnk_conv_out_w(d);
  double s = 0.0;
  for (int b = 0; b < d->n; ++b) {
    const float *src = dy + ((long)b * d->k + k) * plane;
#pragma omp simd reduction(+ : s)
    for (long v = 0; v < plane; ++v)
      s += src[v];
  }
  return s;
}

void c1_backward_weights(const dnnk_conv_desc *d, const float *x,
                         const float *dy, float *dw, float *dbias, float *ws,
                         size_t ws_floats) {
  size_t slot = w1_slot(d);
  float *own;
  int threads = cg_take_workspace(&ws, &ws_floats, 0, slot, d->n, &own,
                                  "one-channel weights' gradient: workspace");
  long nimg = image_floats(d), ndy = dy_floats(d);
  long nw = (long)d->k * d->kh * d->kw;
#pragma omp parallel num_threads(threads)
  {
    int t = omp_get_thread_num(), nt = omp_get_num_threads();
    w1_bufs mine = carve(d, ws, t);
    float *img = mine.img, *dyp = mine.dyp, *part = mine.part;
    /* The zero borders and lanes, written once per pass. */
    for (long e = 0; e < nimg; ++e)
      img[e] = 0.0f;
    for (long e = 0; e < ndy; ++e)
      dyp[e] = 0.0f;
    for (long e = 0; e < nw; ++e)
      part[e] = 0.0f;
    /* Contiguous images per thread: the sums run in image order. */
    int b0 = (int)((long)d->n * t / nt), b1 = (int)((long)d->n * (t + 1) / nt);
    for (int b = b0; b < b1; ++b) {
      pad_image(d, x, dy, b, img, dyp);
      image_taps(d, img, dyp, part);
    }
#pragma omp barrier
    /* Thread q's part is q slots past thread 0's. */
    const float *part0 = carve(d, ws, 0).part;
#pragma omp for schedule(static)
    for (long e = 0; e < nw; ++e) {
      float s = 0.0f;
      for (int q = 0; q < nt; ++q)
        s += part0[slot * q + e];
      dw[e] = s;
    }
    if (dbias) {
#pragma omp for schedule(static)
      for (int k = 0; k < d->k; ++k)
        dbias[k] = (float)channel_sum(d, dy, k);
    }
  }
  free(own);
}

#pragma omp end declare target
