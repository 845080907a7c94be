/* Data augmentation of uint8 image batches into normalised float NCHW.
 *
 * Reproducibility is the design constraint: the host and the DPU (x86 and
 * Arm, any thread count, any split of the batch) must produce the same
 * bytes. Hence counter-based randomness per image, image statistics in
 * integers, a fixed order of float operations with contraction to FMA
 * disabled (FMA rounds once where mul+add rounds twice), and no float
 * reductions. */
#include <stdlib.h>

#include "alloc.h"
#include "augment_internal.h"

#pragma STDC FP_CONTRACT OFF

#pragma omp declare target

/* Draws the random choices of the image with global index idx. */
aug_draw dnnk_aug_draw(const dnnk_augment_params *p, const uint8_t *img, int c,
                       int h, int w, long idx) {
  uint32_t r[4], s[4];
  uint32_t ctr0[4] = {p->epoch, (uint32_t)idx, (uint32_t)((uint64_t)idx >> 32),
                      0};
  uint32_t ctr1[4] = {ctr0[0], ctr0[1], ctr0[2], 1};
  dnnk_philox_block(ctr0, p->seed, r);
  dnnk_philox_block(ctr1, p->seed, s);
  aug_draw d;
  d.off_y = uniform_int(r[0], h + 2 * p->pad - p->out_h + 1);
  d.off_x = uniform_int(r[1], w + 2 * p->pad - p->out_w + 1);
  d.flip = p->flip ? (int)(r[2] >> 31) : 0;
  d.use_add = p->brightness != 0.0f;
  d.use_gain = p->contrast != 0.0f;
  d.add = uniform_pm1(s[0]) * p->brightness * 255.0f;
  d.gain = 1.0f + uniform_pm1(s[1]) * p->contrast;
  d.mean = 0.0f;
  if (d.use_gain) {
    /* Exact integer sum: a float sum would depend on summation order. */
    uint64_t sum = 0;
    long count = (long)c * h * w;
    for (long i = 0; i < count; ++i)
      sum += img[i];
    d.mean = (float)((double)sum / (double)count);
  }
  return d;
}

/* Writes one output row of channel ci: crop, pad and flip, as raw pixel
 * values in float. The layout and flip tests are hoisted out of the pixel
 * loop, and the columns inside the image are computed once, so the inner
 * loops are branch-free and vectorise. */
void dnnk_aug_gather_row(const dnnk_augment_params *p, const aug_draw *d,
                         const uint8_t *img, int layout, int c, int h, int w,
                         int ci, int oy, float *row) {
  int n = p->out_w, y = oy + d->off_y - p->pad;
  if (y < 0 || y >= h) {
    for (int ox = 0; ox < n; ++ox)
      row[ox] = 0.0f;
    return;
  }
  /* Unflipped output column ox reads input column x0 + ox; flipped, it reads
   * x0 + n - 1 - ox. Either way [lo, hi) are the columns inside the image. */
  int x0 = d->off_x - p->pad;
  int lo = d->flip ? x0 + n - w : -x0;
  int hi = d->flip ? x0 + n : w - x0;
  lo = lo < 0 ? 0 : lo > n ? n : lo;
  hi = hi < lo ? lo : hi > n ? n : hi;
  for (int ox = 0; ox < lo; ++ox)
    row[ox] = 0.0f;
  for (int ox = hi; ox < n; ++ox)
    row[ox] = 0.0f;
  long step = layout == DNNK_NHWC ? c : 1;
  const uint8_t *line = layout == DNNK_NHWC ? img + (long)y * w * c + ci
                                            : img + ((long)ci * h + y) * w;
  if (d->flip) {
    const uint8_t *src = line + (long)(x0 + n - 1) * step;
    if (step == 1) {
#pragma omp simd
      for (int ox = lo; ox < hi; ++ox)
        row[ox] = (float)src[-ox];
    } else {
      for (int ox = lo; ox < hi; ++ox)
        row[ox] = (float)src[-(long)ox * step];
    }
  } else {
    const uint8_t *src = line + (long)x0 * step;
    if (step == 1) {
#pragma omp simd
      for (int ox = lo; ox < hi; ++ox)
        row[ox] = (float)src[ox];
    } else {
      for (int ox = lo; ox < hi; ++ox)
        row[ox] = (float)src[(long)ox * step];
    }
  }
}

/* Jitter, clamp and normalise a row in place, in one fixed order of
 * operations: ((v - m) * g + m) + a, clamped to [0, 255], then
 * (v * (1/255) - shift) * scale. A disabled jitter uses m = 0, g = 1 or
 * a = 0, which are exact identities on pixel values, so skipping a step and
 * running it neutrally give the same bits. */
static void transform_row(const aug_draw *d, float scale, float shift, int n,
                          float *row) {
  float g = d->use_gain ? d->gain : 1.0f, m = d->use_gain ? d->mean : 0.0f;
  float a = d->use_add ? d->add : 0.0f;
#pragma omp simd
  for (int i = 0; i < n; ++i) {
    float v = (row[i] - m) * g + m;
    v = v + a;
    v = v < 0.0f ? 0.0f : v;
    v = v > 255.0f ? 255.0f : v;
    row[i] = (v * (1.0f / 255.0f) - shift) * scale;
  }
}

void dnnk_augment_defaults(dnnk_augment_params *p, int h, int w) {
  p->seed = 0;
  p->epoch = 0;
  p->pad = 0;
  p->out_h = h;
  p->out_w = w;
  p->flip = 0;
  p->brightness = 0.0f;
  p->contrast = 0.0f;
  for (int i = 0; i < DNNK_AUG_MAX_CHANNELS; ++i) {
    p->mean[i] = 0.0f;
    p->std[i] = 1.0f;
  }
  p->scale[0] = p->scale[1] = 0.0f;
  p->ratio[0] = p->ratio[1] = 0.0f;
  p->degrees[0] = p->degrees[1] = 0.0f;
  p->fill = 0.0f;
  p->color = 0.0f;
  p->saturation[0] = p->saturation[1] = 0.0f;
}

void dnnk_augment_batch(const dnnk_augment_params *p, const uint8_t *in,
                        int layout, int n, int c, int h, int w,
                        long first_index, float *out) {
  if (n <= 0 || c <= 0 || c > DNNK_AUG_MAX_CHANNELS)
    return;
  /* The new operations take their own path: this one keeps its bytes. */
  if (dnnk_aug_is_full(p)) {
    dnnk_aug_full_batch(p, in, layout, n, c, h, w, first_index, out);
    return;
  }
  long in_size = (long)c * h * w, out_plane = (long)p->out_h * p->out_w;
  aug_draw *draws =
      (aug_draw *)dnnk_alloc(sizeof(aug_draw) * n, "augment: draws");
  /* Draws first, so the pixel loop can split images by channel. */
#pragma omp parallel for schedule(static)
  for (int b = 0; b < n; ++b)
    draws[b] = dnnk_aug_draw(p, in + b * in_size, c, h, w, first_index + b);
#pragma omp parallel for collapse(2) schedule(static)
  for (int b = 0; b < n; ++b)
    for (int ci = 0; ci < c; ++ci) {
      const uint8_t *img = in + b * in_size;
      float *plane = out + ((long)b * c + ci) * out_plane;
      float scale = 1.0f / p->std[ci], shift = p->mean[ci];
      for (int oy = 0; oy < p->out_h; ++oy) {
        float *row = plane + (long)oy * p->out_w;
        dnnk_aug_gather_row(p, &draws[b], img, layout, c, h, w, ci, oy, row);
        transform_row(&draws[b], scale, shift, p->out_w, row);
      }
    }
  free(draws);
}

#pragma omp end declare target
