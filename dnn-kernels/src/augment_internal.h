/* What the two augmentation paths share: the per-image draws of the
 * original operations, the integer crop of a row, uniform numbers. */
#ifndef DNNK_AUGMENT_INTERNAL_H
#define DNNK_AUGMENT_INTERNAL_H

#include "dnnk.h"

#pragma omp declare target

/* Random choices made for one image. */
typedef struct aug_draw {
  int off_y, off_x; /* top-left of the crop in the padded image */
  int flip;         /* mirror the crop horizontally */
  float add;        /* brightness offset, pixel units */
  float gain;       /* contrast factor */
  float mean;       /* image mean (pixel units), centre of the contrast */
  int use_add, use_gain;
} aug_draw;

/* Uniform integer in [0, range) from 32 random bits (multiply-shift). */
static inline int uniform_int(uint32_t u, int range) {
  return (int)(((uint64_t)u * (uint32_t)range) >> 32);
}

/* Uniform float in [0, 1) from the top 24 bits: exact on every ISA. */
static inline float uniform01(uint32_t u) {
  return (float)(u >> 8) * (1.0f / 16777216.0f);
}

/* Uniform float in [-1, 1). */
static inline float uniform_pm1(uint32_t u) {
  return uniform01(u) * 2.0f - 1.0f;
}

/* Philox block k of image idx: draws beyond the first two blocks. */
static inline void aug_block(const dnnk_augment_params *p, long idx, uint32_t k,
                             uint32_t out[4]) {
  uint32_t ctr[4] = {p->epoch, (uint32_t)idx, (uint32_t)((uint64_t)idx >> 32),
                     k};
  dnnk_philox_block(ctr, p->seed, out);
}

/* The crop offsets, flip, brightness and contrast of image index idx. */
aug_draw dnnk_aug_draw(const dnnk_augment_params *p, const uint8_t *img, int c,
                       int h, int w, long idx);
/* Output row oy of channel ci by integer crop, zero pad and flip, as raw
 * pixel values in float. */
void dnnk_aug_gather_row(const dnnk_augment_params *p, const aug_draw *d,
                         const uint8_t *img, int layout, int c, int h, int w,
                         int ci, int oy, float *row);
/* 1 when p asks for a warp (resized crop, rotation) or a colour change. */
int dnnk_aug_is_full(const dnnk_augment_params *p);
/* dnnk_augment_batch with warp and colour (augment_warp.c). */
void dnnk_aug_full_batch(const dnnk_augment_params *p, const uint8_t *in,
                         int layout, int n, int c, int h, int w,
                         long first_index, float *out);

#pragma omp end declare target

#endif /* DNNK_AUGMENT_INTERNAL_H */
