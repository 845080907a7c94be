/* A fixed augmentation problem and the FNV-1a hash of its output bytes,
 * shared by the host tests, the offload test and the cross-ISA check: every
 * build of dnnk must reproduce it exactly (measured on x86_64 with AVX-512,
 * baseline x86_64 and AArch64 Cortex-A72 code). */
#ifndef DNNK_AUGMENT_GOLDEN_H
#define DNNK_AUGMENT_GOLDEN_H

#include <stdint.h>
#include <stdlib.h>

#include "dnnk.h"

/* FNV-1a 64 of the float output of dnnk_augment_golden_run(). */
#define DNNK_AUGMENT_GOLDEN 0xa8deaace489979a8ull
/* The same for the heavy operations (dnnk_augment_heavy_golden_hash()). */
#define DNNK_AUGMENT_HEAVY_GOLDEN 0x4b0d53766523d31cull

/* Geometry of the golden batch: 8 NHWC 32x32 RGB images. */
enum { GOLDEN_N = 8, GOLDEN_C = 3, GOLDEN_H = 32, GOLDEN_W = 32 };

/* Fills the golden input images and parameters. */
static inline void dnnk_augment_golden_setup(uint8_t *img,
                                             dnnk_augment_params *p) {
  long nin = (long)GOLDEN_N * GOLDEN_C * GOLDEN_H * GOLDEN_W;
  for (long i = 0; i < nin; ++i)
    img[i] = (uint8_t)(i * 2654435761u >> 24);
  dnnk_augment_defaults(p, GOLDEN_H, GOLDEN_W);
  p->seed = 2024;
  p->epoch = 3;
  p->pad = 4;
  p->flip = 1;
  p->brightness = 0.2f;
  p->contrast = 0.2f;
  for (int i = 0; i < 3; ++i) {
    p->mean[i] = 0.45f + 0.01f * i;
    p->std[i] = 0.25f;
  }
}

/* FNV-1a 64 over a byte range. */
static inline uint64_t dnnk_fnv1a(const void *data, size_t size) {
  const unsigned char *b = (const unsigned char *)data;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < size; ++i) {
    h ^= b[i];
    h *= 1099511628211ull;
  }
  return h;
}

/* Runs the golden augmentation (first image index 64) on the calling side
 * and returns the hash of its output. */
static inline uint64_t dnnk_augment_golden_hash(void) {
  long nin = (long)GOLDEN_N * GOLDEN_C * GOLDEN_H * GOLDEN_W;
  uint8_t *img = (uint8_t *)malloc(nin);
  float *out = (float *)malloc(sizeof(float) * nin);
  dnnk_augment_params p;
  dnnk_augment_golden_setup(img, &p);
  dnnk_augment_batch(&p, img, DNNK_NHWC, GOLDEN_N, GOLDEN_C, GOLDEN_H, GOLDEN_W,
                     64, out);
  uint64_t h = dnnk_fnv1a(out, sizeof(float) * nin);
  free(img);
  free(out);
  return h;
}

/* The golden batch through every heavy operation (resized crop to 28x28 of
 * the padded image, rotation, flip, channel gain, contrast, saturation,
 * brightness); first image index 64. */
static inline uint64_t dnnk_augment_heavy_golden_hash(void) {
  long nin = (long)GOLDEN_N * GOLDEN_C * GOLDEN_H * GOLDEN_W;
  long nout = (long)GOLDEN_N * GOLDEN_C * 28 * 28;
  uint8_t *img = (uint8_t *)malloc(nin);
  float *out = (float *)malloc(sizeof(float) * nout);
  dnnk_augment_params p;
  dnnk_augment_golden_setup(img, &p);
  p.out_h = p.out_w = 28;
  p.scale[0] = 0.25f, p.scale[1] = 1.0f;
  p.ratio[0] = 0.75f, p.ratio[1] = 4.0f / 3.0f;
  p.degrees[0] = -30.0f, p.degrees[1] = 30.0f;
  p.fill = 40.0f;
  p.color = 0.3f;
  p.saturation[0] = -0.6f, p.saturation[1] = 0.6f;
  dnnk_augment_batch(&p, img, DNNK_NHWC, GOLDEN_N, GOLDEN_C, GOLDEN_H, GOLDEN_W,
                     64, out);
  uint64_t h = dnnk_fnv1a(out, sizeof(float) * nout);
  free(img);
  free(out);
  return h;
}

#endif /* DNNK_AUGMENT_GOLDEN_H */
