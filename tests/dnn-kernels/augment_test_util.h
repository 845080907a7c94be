// What the augmentation tests share: random batches, one call of
// dnnk_augment_batch into a vector, and byte-wise comparison.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "dnnk.h"

// A batch of random uint8 images, NCHW.
inline std::vector<uint8_t> random_images(int n, int c, int h, int w,
                                          unsigned seed) {
  std::mt19937 gen(seed);
  std::vector<uint8_t> v((size_t)n * c * h * w);
  for (auto &p : v)
    p = (uint8_t)(gen() & 0xff);
  return v;
}

// Runs dnnk_augment_batch into a fresh vector.
inline std::vector<float> augment(const dnnk_augment_params &p,
                                  const std::vector<uint8_t> &in, int layout,
                                  int n, int c, int h, int w, long first = 0) {
  std::vector<float> out((size_t)n * c * p.out_h * p.out_w);
  dnnk_augment_batch(&p, in.data(), layout, n, c, h, w, first, out.data());
  return out;
}

// Byte-wise equality of two float vectors (distinguishes -0.0 and NaNs).
inline bool same_bytes(const std::vector<float> &a,
                       const std::vector<float> &b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}
