// The heavier augmentation (random resized crop, rotation, per-channel gain,
// saturation): exact special cases (identity, quarter turns, grey), a
// per-pixel reference in double written from the documented pipeline, and
// the same bytes across seeds' reruns, batch splits, layouts and threads.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <random>

#include "augment_golden.h"
#include "augment_test_util.h"
#include "dnnk.h"

#pragma STDC FP_CONTRACT OFF

namespace {

// Everything on: the trainer's heavy configuration on CIFAR-sized images.
dnnk_augment_params heavy_params(uint64_t seed, uint32_t epoch, int h, int w) {
  dnnk_augment_params p;
  dnnk_augment_defaults(&p, h, w);
  p.seed = seed;
  p.epoch = epoch;
  p.flip = 1;
  p.scale[0] = 0.3f, p.scale[1] = 1.0f;
  p.ratio[0] = 0.75f, p.ratio[1] = 4.0f / 3.0f;
  p.degrees[0] = -20.0f, p.degrees[1] = 20.0f;
  p.fill = 17.0f;
  p.color = 0.2f;
  p.saturation[0] = -0.5f, p.saturation[1] = 0.5f;
  p.brightness = 0.2f;
  p.contrast = 0.3f;
  for (int i = 0; i < 3; ++i)
    p.mean[i] = 0.4f + 0.05f * i, p.std[i] = 0.25f + 0.01f * i;
  return p;
}

double u01(uint32_t u) { return (double)(u >> 8) / 16777216.0; }

// The documented pipeline per pixel, in double, with libm: draws from
// dnnk_philox (blocks 0-1 as the plain crop, 2 box, 3 angle and saturation,
// 4 channel gains), the box as torchvision's RandomResizedCrop draws it
// (clamped), flip then rotation about the output's centre then the box,
// bilinear with fill; gain, contrast, saturation, brightness, clamp,
// normalisation.
std::vector<float> reference(const dnnk_augment_params &p,
                             const std::vector<uint8_t> &img, int n, int c,
                             int h, int w, long first) {
  int oh = p.out_h, ow = p.out_w, ph = h + 2 * p.pad, pw = w + 2 * p.pad;
  std::vector<float> out((size_t)n * c * oh * ow);
  for (int b = 0; b < n; ++b) {
    long idx = first + b;
    auto draw = [&](uint32_t block, int word) {
      return dnnk_philox(p.seed, p.epoch, idx, block, word);
    };
    const uint8_t *im = &img[(size_t)b * c * h * w];
    bool flip = p.flip && (draw(0, 2) >> 31);
    int bx, by, bh, bw;
    if (p.scale[1] > 0) {
      double area =
          (double)ph * pw *
          (p.scale[0] + u01(draw(2, 0)) * ((double)p.scale[1] - p.scale[0]));
      double lr0 = std::log((double)p.ratio[0]),
             lr1 = std::log((double)p.ratio[1]);
      double aspect = std::exp(lr0 + u01(draw(2, 1)) * (lr1 - lr0));
      bh =
          std::min(std::max((int)std::lround(std::sqrt(area / aspect)), 1), ph);
      bw =
          std::min(std::max((int)std::lround(std::sqrt(area * aspect)), 1), pw);
      by = (int)(((uint64_t)draw(2, 2) * (uint32_t)(ph - bh + 1)) >> 32);
      bx = (int)(((uint64_t)draw(2, 3) * (uint32_t)(pw - bw + 1)) >> 32);
    } else {
      bh = oh, bw = ow;
      by = (int)(((uint64_t)draw(0, 0) * (uint32_t)(ph - oh + 1)) >> 32);
      bx = (int)(((uint64_t)draw(0, 1) * (uint32_t)(pw - ow + 1)) >> 32);
    }
    double deg =
        p.degrees[0] + u01(draw(3, 0)) * ((double)p.degrees[1] - p.degrees[0]);
    double th = deg * M_PI / 180.0, cs = std::cos(th), sn = std::sin(th);
    double gain[4],
        sat = 1.0 + p.saturation[0] +
              u01(draw(3, 1)) * ((double)p.saturation[1] - p.saturation[0]);
    for (int ci = 0; ci < 4; ++ci)
      gain[ci] = 1.0 + (u01(draw(4, ci)) * 2 - 1) * p.color;
    double add = (u01(draw(1, 0)) * 2 - 1) * p.brightness * 255.0;
    double contrast = 1.0 + (u01(draw(1, 1)) * 2 - 1) * p.contrast;
    double mean = 0;
    for (int i = 0; i < c * h * w; ++i)
      mean += im[i];
    mean /= c * h * w;
    auto px = [&](int ci, int y, int x) -> double {
      if (y < 0 || y >= h || x < 0 || x >= w)
        return p.fill;
      return im[(ci * h + y) * w + x];
    };
    double cx = (ow - 1) / 2.0, cy = (oh - 1) / 2.0;
    for (int y = 0; y < oh; ++y)
      for (int x = 0; x < ow; ++x) {
        double dx = (flip ? ow - 1 - x : x) - cx, dy = y - cy;
        double u = cx + cs * dx - sn * dy, v = cy + sn * dx + cs * dy;
        double sx = bx - p.pad + (u + 0.5) * bw / ow - 0.5;
        double sy = by - p.pad + (v + 0.5) * bh / oh - 0.5;
        int ix = (int)std::floor(sx), iy = (int)std::floor(sy);
        double ax = sx - ix, ay = sy - iy, val[4];
        for (int ci = 0; ci < c; ++ci) {
          val[ci] =
              (px(ci, iy, ix) * (1 - ax) + px(ci, iy, ix + 1) * ax) * (1 - ay) +
              (px(ci, iy + 1, ix) * (1 - ax) + px(ci, iy + 1, ix + 1) * ax) *
                  ay;
          val[ci] *= gain[ci];
          if (p.contrast != 0)
            val[ci] = (val[ci] - mean) * contrast + mean;
        }
        if (c == 3 && (p.saturation[0] != 0 || p.saturation[1] != 0)) {
          double grey = 0.299 * val[0] + 0.587 * val[1] + 0.114 * val[2];
          for (int ci = 0; ci < 3; ++ci)
            val[ci] = (val[ci] - grey) * sat + grey;
        }
        for (int ci = 0; ci < c; ++ci) {
          double v2 = std::min(std::max(val[ci] + add, 0.0), 255.0);
          out[(((size_t)b * c + ci) * oh + y) * ow + x] =
              (float)((v2 / 255.0 - p.mean[ci]) / p.std[ci]);
        }
      }
  }
  return out;
}

// Largest absolute difference.
double max_diff(const std::vector<float> &a, const std::vector<float> &b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i)
    m = std::max(m, (double)std::fabs(a[i] - b[i]));
  return a.size() == b.size() ? m : 1e9;
}

TEST(AugmentWarp, ResizedCropOfScaleOneAspectOneIsTheIdentity) {
  auto img = random_images(6, 3, 12, 12, 21);
  dnnk_augment_params plain;
  dnnk_augment_defaults(&plain, 12, 12);
  plain.mean[1] = 0.3f, plain.std[2] = 0.5f;
  dnnk_augment_params p = plain;
  p.seed = 5;
  p.scale[0] = p.scale[1] = 1.0f;
  p.ratio[0] = p.ratio[1] = 1.0f;
  EXPECT_TRUE(same_bytes(augment(p, img, DNNK_NCHW, 6, 3, 12, 12),
                         augment(plain, img, DNNK_NCHW, 6, 3, 12, 12)));
}

TEST(AugmentWarp, QuarterTurnsAreTransposesAndFlips) {
  int n = 4, s = 9;
  auto img = random_images(n, 2, s, s, 22);
  dnnk_augment_params p;
  dnnk_augment_defaults(&p, s, s);
  for (int deg : {90, -90, 180, 270}) {
    p.degrees[0] = p.degrees[1] = (float)deg;
    auto out = augment(p, img, DNNK_NCHW, n, 2, s, s);
    for (int b = 0; b < n; ++b)
      for (int ci = 0; ci < 2; ++ci)
        for (int y = 0; y < s; ++y)
          for (int x = 0; x < s; ++x) {
            // Counter-clockwise: the top row becomes the left column.
            int sy = deg == 90 ? x : deg == 180 ? s - 1 - y : s - 1 - x;
            int sx = deg == 90 ? s - 1 - y : deg == 180 ? s - 1 - x : y;
            size_t o = (((size_t)b * 2 + ci) * s + y) * s + x;
            float want = (float)img[(((size_t)b * 2 + ci) * s + sy) * s + sx] *
                         (1.0f / 255.0f);
            ASSERT_EQ(out[o], want) << deg << " degrees, image " << b;
          }
  }
}

TEST(AugmentWarp, SaturationZeroGivesGreyAndOneChannelIsLeftAlone) {
  int n = 5, s = 10;
  auto img = random_images(n, 3, s, s, 23);
  dnnk_augment_params p;
  dnnk_augment_defaults(&p, s, s);
  p.saturation[0] = p.saturation[1] = -1.0f; // factor 0
  auto out = augment(p, img, DNNK_NCHW, n, 3, s, s);
  size_t plane = (size_t)s * s;
  for (int b = 0; b < n; ++b)
    for (size_t i = 0; i < plane; ++i) {
      const uint8_t *px = &img[(size_t)b * 3 * plane + i];
      double grey =
          (0.299 * px[0] + 0.587 * px[plane] + 0.114 * px[2 * plane]) / 255.0;
      const float *o = &out[(size_t)b * 3 * plane + i];
      ASSERT_EQ(o[0], o[plane]) << b << " " << i;
      ASSERT_EQ(o[0], o[2 * plane]) << b << " " << i;
      ASSERT_NEAR(o[0], grey, 1e-5) << b << " " << i;
    }
  // One channel: saturation is not defined, the image passes unchanged.
  auto grey_img = random_images(n, 1, s, s, 24);
  dnnk_augment_params plain;
  dnnk_augment_defaults(&plain, s, s);
  EXPECT_TRUE(same_bytes(augment(p, grey_img, DNNK_NCHW, n, 1, s, s),
                         augment(plain, grey_img, DNNK_NCHW, n, 1, s, s)));
}

TEST(AugmentWarp, MatchesPerPixelReference) {
  int n = 12, c = 3, h = 20, w = 24;
  auto img = random_images(n, c, h, w, 25);
  auto p = heavy_params(31, 2, h, w);
  p.out_h = 16, p.out_w = 18;
  EXPECT_LT(max_diff(augment(p, img, DNNK_NCHW, n, c, h, w, 500),
                     reference(p, img, n, c, h, w, 500)),
            2e-4);
  // Each part alone too: rotation with the plain crop and padding, the
  // resized crop alone, colour alone, one channel.
  dnnk_augment_params r;
  dnnk_augment_defaults(&r, 16, 18);
  r.seed = 7, r.pad = 3, r.degrees[0] = -45.0f, r.degrees[1] = 45.0f;
  EXPECT_LT(max_diff(augment(r, img, DNNK_NCHW, n, c, h, w),
                     reference(r, img, n, c, h, w, 0)),
            2e-4);
  dnnk_augment_params q;
  dnnk_augment_defaults(&q, 8, 8);
  q.seed = 8, q.scale[0] = 0.1f, q.scale[1] = 0.9f;
  q.ratio[0] = 0.5f, q.ratio[1] = 2.0f;
  EXPECT_LT(max_diff(augment(q, img, DNNK_NCHW, n, c, h, w),
                     reference(q, img, n, c, h, w, 0)),
            2e-4);
  dnnk_augment_params k;
  dnnk_augment_defaults(&k, h, w);
  k.seed = 9, k.color = 0.5f, k.contrast = 0.4f, k.brightness = 0.1f;
  k.saturation[0] = -0.8f, k.saturation[1] = 0.9f;
  EXPECT_LT(max_diff(augment(k, img, DNNK_NCHW, n, c, h, w),
                     reference(k, img, n, c, h, w, 0)),
            2e-4);
  auto grey = random_images(n, 1, h, w, 26);
  auto g = heavy_params(32, 0, h, w);
  EXPECT_LT(max_diff(augment(g, grey, DNNK_NCHW, n, 1, h, w),
                     reference(g, grey, n, 1, h, w, 0)),
            2e-4);
}

TEST(AugmentWarp, SameBytesAcrossReruns_Splits_LayoutsAndThreads) {
  int n = 24, c = 3, s = 32;
  auto img = random_images(n, c, s, s, 27);
  auto p = heavy_params(99, 1, s, s);
  auto whole = augment(p, img, DNNK_NCHW, n, c, s, s, 100);
  EXPECT_TRUE(same_bytes(whole, augment(p, img, DNNK_NCHW, n, c, s, s, 100)));
  size_t in_img = (size_t)c * s * s;
  std::vector<uint8_t> head(img.begin(), img.begin() + 7 * in_img);
  std::vector<uint8_t> tail(img.begin() + 7 * in_img, img.end());
  auto a = augment(p, head, DNNK_NCHW, 7, c, s, s, 100);
  auto b = augment(p, tail, DNNK_NCHW, n - 7, c, s, s, 107);
  a.insert(a.end(), b.begin(), b.end());
  EXPECT_TRUE(same_bytes(whole, a));
  std::vector<uint8_t> nhwc(img.size());
  for (int i = 0; i < n; ++i)
    for (int ci = 0; ci < c; ++ci)
      for (int y = 0; y < s * s; ++y)
        nhwc[((size_t)i * s * s + y) * c + ci] =
            img[((size_t)i * c + ci) * s * s + y];
  EXPECT_TRUE(same_bytes(whole, augment(p, nhwc, DNNK_NHWC, n, c, s, s, 100)));
  int keep = omp_get_max_threads();
  omp_set_num_threads(1);
  auto one = augment(p, img, DNNK_NCHW, n, c, s, s, 100);
  omp_set_num_threads(3);
  auto three = augment(p, img, DNNK_NCHW, n, c, s, s, 100);
  omp_set_num_threads(keep);
  EXPECT_TRUE(same_bytes(whole, one));
  EXPECT_TRUE(same_bytes(whole, three));
  auto other = heavy_params(100, 1, s, s);
  EXPECT_FALSE(
      same_bytes(whole, augment(other, img, DNNK_NCHW, n, c, s, s, 100)));
}

TEST(AugmentWarp, GoldenHashIsTheSameOnEveryBuild) {
  // Also checked in target regions and by the AArch64 build under qemu.
  EXPECT_EQ(dnnk_augment_heavy_golden_hash(), DNNK_AUGMENT_HEAVY_GOLDEN);
}

} // namespace
