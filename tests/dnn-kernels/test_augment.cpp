// Augmentation: Philox known answers, reproducibility across seeds, epochs,
// batch splits, layouts and thread counts, and equality with a per-pixel
// reference of the documented pipeline.
#include <gtest/gtest.h>
#include <omp.h>

#include <cstring>

#include "augment_golden.h"
#include "augment_test_util.h"
#include "dnnk.h"
#include "reference.h"

#pragma STDC FP_CONTRACT OFF

namespace {

// The same batch converted from NCHW to NHWC.
std::vector<uint8_t> to_nhwc(const std::vector<uint8_t> &in, int n, int c,
                             int h, int w) {
  std::vector<uint8_t> out(in.size());
  for (int b = 0; b < n; ++b)
    for (int ci = 0; ci < c; ++ci)
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
          out[(((size_t)b * h + y) * w + x) * c + ci] =
              in[(((size_t)b * c + ci) * h + y) * w + x];
  return out;
}

// CIFAR-style parameters: pad 4, flip, jitter, per-channel normalisation.
dnnk_augment_params cifar_params(uint64_t seed, uint32_t epoch) {
  dnnk_augment_params p;
  dnnk_augment_defaults(&p, 32, 32);
  p.seed = seed;
  p.epoch = epoch;
  p.pad = 4;
  p.flip = 1;
  p.brightness = 0.2f;
  p.contrast = 0.3f;
  const float mean[3] = {0.49f, 0.48f, 0.45f}, std[3] = {0.25f, 0.24f, 0.26f};
  for (int i = 0; i < 3; ++i) {
    p.mean[i] = mean[i];
    p.std[i] = std[i];
  }
  return p;
}

TEST(Philox, KnownAnswers) {
  // Random123's kat_vectors for philox4x32_10.
  uint32_t out[4];
  const uint32_t zero[4] = {0, 0, 0, 0};
  dnnk_philox_block(zero, 0, out);
  EXPECT_EQ(out[0], 0x6627e8d5u);
  EXPECT_EQ(out[1], 0xe169c58du);
  EXPECT_EQ(out[2], 0xbc57ac4cu);
  EXPECT_EQ(out[3], 0x9b00dbd8u);
  const uint32_t ones[4] = {~0u, ~0u, ~0u, ~0u};
  dnnk_philox_block(ones, ~0ull, out);
  EXPECT_EQ(out[0], 0x408f276du);
  EXPECT_EQ(out[1], 0x41c83b0eu);
  EXPECT_EQ(out[2], 0xa20bc7c6u);
  EXPECT_EQ(out[3], 0x6d5451fdu);
  const uint32_t pi[4] = {0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u};
  // Key words {0xa4093822, 0x299f31d0}, low word first.
  dnnk_philox_block(pi, 0x299f31d0a4093822ull, out);
  EXPECT_EQ(out[0], 0xd16cfe09u);
  EXPECT_EQ(out[1], 0x94fdccebu);
  EXPECT_EQ(out[2], 0x5001e420u);
  EXPECT_EQ(out[3], 0x24126ea1u);
}

TEST(Augment, GoldenHashIsTheSameOnEveryBuild) {
  // The same constant is checked by the offload test (baseline-ISA device
  // code) and the AArch64 check: augmentation is bit-identical across ISAs.
  EXPECT_EQ(dnnk_augment_golden_hash(), DNNK_AUGMENT_GOLDEN);
}

TEST(Augment, SameSeedSameBytes) {
  auto img = random_images(16, 3, 32, 32, 1);
  auto p = cifar_params(1234, 3);
  EXPECT_TRUE(same_bytes(augment(p, img, DNNK_NCHW, 16, 3, 32, 32),
                         augment(p, img, DNNK_NCHW, 16, 3, 32, 32)));
}

TEST(Augment, DifferentSeedOrEpochDifferentBytes) {
  auto img = random_images(16, 3, 32, 32, 2);
  auto base = augment(cifar_params(1234, 3), img, DNNK_NCHW, 16, 3, 32, 32);
  EXPECT_FALSE(same_bytes(
      base, augment(cifar_params(1235, 3), img, DNNK_NCHW, 16, 3, 32, 32)));
  EXPECT_FALSE(same_bytes(
      base, augment(cifar_params(1234, 4), img, DNNK_NCHW, 16, 3, 32, 32)));
}

TEST(Augment, BatchSplitGivesTheSameBytes) {
  // The host may augment images [0, 10) and the DPU [10, 24) of one batch.
  int n = 24;
  auto img = random_images(n, 3, 32, 32, 3);
  auto p = cifar_params(99, 1);
  auto whole = augment(p, img, DNNK_NCHW, n, 3, 32, 32, 100);
  size_t in_img = 3 * 32 * 32, out_img = 3 * 32 * 32;
  std::vector<uint8_t> head(img.begin(), img.begin() + 10 * in_img);
  std::vector<uint8_t> tail(img.begin() + 10 * in_img, img.end());
  auto a = augment(p, head, DNNK_NCHW, 10, 3, 32, 32, 100);
  auto b = augment(p, tail, DNNK_NCHW, n - 10, 3, 32, 32, 110);
  a.insert(a.end(), b.begin(), b.end());
  ASSERT_EQ(a.size(), n * out_img);
  EXPECT_TRUE(same_bytes(whole, a));
}

TEST(Augment, ThreadCountDoesNotMatter) {
  auto img = random_images(7, 3, 32, 32, 4);
  auto p = cifar_params(5, 0);
  int keep = omp_get_max_threads();
  omp_set_num_threads(1);
  auto one = augment(p, img, DNNK_NCHW, 7, 3, 32, 32);
  omp_set_num_threads(3);
  auto three = augment(p, img, DNNK_NCHW, 7, 3, 32, 32);
  omp_set_num_threads(keep);
  EXPECT_TRUE(same_bytes(one, three));
}

TEST(Augment, NhwcAndNchwInputsAgree) {
  auto img = random_images(5, 3, 32, 32, 5);
  auto p = cifar_params(77, 2);
  EXPECT_TRUE(same_bytes(
      augment(p, img, DNNK_NCHW, 5, 3, 32, 32),
      augment(p, to_nhwc(img, 5, 3, 32, 32), DNNK_NHWC, 5, 3, 32, 32)));
}

TEST(Augment, IdentityIsPlainNormalisation) {
  auto img = random_images(3, 2, 5, 7, 6);
  dnnk_augment_params p;
  dnnk_augment_defaults(&p, 5, 7);
  p.mean[0] = 0.5f;
  p.std[1] = 0.5f;
  auto out = augment(p, img, DNNK_NCHW, 3, 2, 5, 7);
  for (size_t i = 0; i < img.size(); ++i) {
    int ch = (int)(i / 35 % 2);
    float want =
        ((float)img[i] * (1.0f / 255.0f) - p.mean[ch]) * (1.0f / p.std[ch]);
    ASSERT_EQ(out[i], want) << i;
  }
}

TEST(Augment, FlipMirrorsOrKeepsEachImage) {
  int n = 32, h = 4, w = 6;
  auto img = random_images(n, 1, h, w, 7);
  dnnk_augment_params p;
  dnnk_augment_defaults(&p, h, w);
  p.flip = 1;
  p.seed = 8;
  auto out = augment(p, img, DNNK_NCHW, n, 1, h, w);
  int flipped = 0;
  for (int b = 0; b < n; ++b) {
    bool same = true, mirror = true;
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        float v = out[(b * h + y) * w + x] * 255.0f;
        same &= std::fabs(v - img[(b * h + y) * w + x]) < 1e-3f;
        mirror &= std::fabs(v - img[(b * h + y) * w + (w - 1 - x)]) < 1e-3f;
      }
    ASSERT_TRUE(same || mirror) << b;
    flipped += mirror && !same;
  }
  EXPECT_GT(flipped, n / 5); // probability 1/2 each
  EXPECT_LT(flipped, n - n / 5);
}

TEST(Augment, CropIsAShiftOfThePaddedImage) {
  int n = 16, h = 6, w = 6, pad = 2;
  auto img = random_images(n, 1, h, w, 9);
  dnnk_augment_params p;
  dnnk_augment_defaults(&p, h, w);
  p.pad = pad;
  p.seed = 10;
  auto out = augment(p, img, DNNK_NCHW, n, 1, h, w);
  for (int b = 0; b < n; ++b) {
    int found = 0;
    for (int dy = -pad; dy <= pad; ++dy)
      for (int dx = -pad; dx <= pad; ++dx) {
        bool ok = true;
        for (int y = 0; y < h && ok; ++y)
          for (int x = 0; x < w && ok; ++x) {
            int sy = y + dy, sx = x + dx;
            float want = (sy < 0 || sy >= h || sx < 0 || sx >= w)
                             ? 0.0f
                             : img[(b * h + sy) * w + sx] / 255.0f;
            ok = std::fabs(out[(b * h + y) * w + x] - want) < 1e-6f;
          }
        found += ok;
      }
    EXPECT_GE(found, 1) << "image " << b << " is no shift of its input";
  }
}

// Per-pixel reference of the documented pipeline, written independently of
// the row-wise kernel: draws from dnnk_philox, crop, flip, contrast around
// the integer image mean, brightness, clamp, normalise.
std::vector<float> reference_augment(const dnnk_augment_params &p,
                                     const std::vector<uint8_t> &img, int n,
                                     int c, int h, int w, long first) {
  std::vector<float> out((size_t)n * c * p.out_h * p.out_w);
  for (int b = 0; b < n; ++b) {
    long idx = first + b;
    auto u01 = [](uint32_t u) {
      return (float)(u >> 8) * (1.0f / 16777216.0f);
    };
    uint32_t r0 = dnnk_philox(p.seed, p.epoch, idx, 0, 0);
    uint32_t r1 = dnnk_philox(p.seed, p.epoch, idx, 0, 1);
    uint32_t r2 = dnnk_philox(p.seed, p.epoch, idx, 0, 2);
    uint32_t s0 = dnnk_philox(p.seed, p.epoch, idx, 1, 0);
    uint32_t s1 = dnnk_philox(p.seed, p.epoch, idx, 1, 1);
    int oy = (int)(((uint64_t)r0 * (h + 2 * p.pad - p.out_h + 1)) >> 32);
    int ox = (int)(((uint64_t)r1 * (w + 2 * p.pad - p.out_w + 1)) >> 32);
    bool flip = p.flip && (r2 >> 31);
    float add = (u01(s0) * 2.0f - 1.0f) * p.brightness * 255.0f;
    float gain = 1.0f + (u01(s1) * 2.0f - 1.0f) * p.contrast;
    const uint8_t *im = &img[(size_t)b * c * h * w];
    uint64_t sum = 0;
    for (int i = 0; i < c * h * w; ++i)
      sum += im[i];
    float mean = (float)((double)sum / (double)(c * h * w));
    for (int ci = 0; ci < c; ++ci)
      for (int y = 0; y < p.out_h; ++y)
        for (int x = 0; x < p.out_w; ++x) {
          int sy = y + oy - p.pad;
          int sx = (flip ? p.out_w - 1 - x : x) + ox - p.pad;
          float v = (sy < 0 || sy >= h || sx < 0 || sx >= w)
                        ? 0.0f
                        : (float)im[(ci * h + sy) * w + sx];
          if (p.contrast != 0.0f)
            v = (v - mean) * gain + mean;
          if (p.brightness != 0.0f)
            v = v + add;
          if (p.contrast != 0.0f || p.brightness != 0.0f)
            v = std::min(std::max(v, 0.0f), 255.0f);
          out[(((size_t)b * c + ci) * p.out_h + y) * p.out_w + x] =
              (v * (1.0f / 255.0f) - p.mean[ci]) * (1.0f / p.std[ci]);
        }
  }
  return out;
}

TEST(Augment, MatchesPerPixelReferenceBitForBit) {
  int n = 9, c = 3, h = 20, w = 18;
  auto img = random_images(n, c, h, w, 11);
  auto p = cifar_params(4242, 7);
  p.out_h = 16; // a crop smaller than the image
  p.out_w = 17;
  EXPECT_TRUE(same_bytes(augment(p, img, DNNK_NCHW, n, c, h, w, 1000),
                         reference_augment(p, img, n, c, h, w, 1000)));
}

} // namespace
