// The blocked-layout (DNNK_NCHWC) passes against the direct reference loops
// (and, for dilation, which those loops lack, against the NCHW passes): odd
// channel counts (not multiples of the block, 1 channel, more than 2
// blocks), strides 2 and 3, padding beyond the kernel, 1x1, workspaces.
#include <gtest/gtest.h>

#include <omp.h>

#include "conv_golden.h"
#include "dnnk.h"
#include "reference.h"

namespace {

// A shape; dilated ones are checked against the NCHW passes.
struct BlockedCase {
  const char *name;
  dnnk_conv_desc d;
};

std::vector<BlockedCase> blocked_cases() {
  // n, c, h, w, k, kh, kw, sh, sw, ph, pw, dh, dw
  return {
      {"3x3_c5_k7_p1", {2, 5, 9, 11, 7, 3, 3, 1, 1, 1, 1, 1, 1}},
      {"3x3_s2_c19_k33_p1", {3, 19, 13, 12, 33, 3, 3, 2, 2, 1, 1, 1, 1}},
      {"1x1_s2_c32_k20", {2, 32, 10, 11, 20, 1, 1, 2, 2, 0, 0, 1, 1}},
      {"1x1_c17_k3", {2, 17, 5, 7, 3, 1, 1, 1, 1, 0, 0, 1, 1}},
      {"5x5_c1_k6_p2", {3, 1, 12, 12, 6, 5, 5, 1, 1, 2, 2, 1, 1}},
      {"5x5_c6_k16_p0", {2, 6, 14, 14, 16, 5, 5, 1, 1, 0, 0, 1, 1}},
      {"3x3_wide_row_c40_k40", {1, 40, 6, 37, 40, 3, 3, 1, 1, 1, 1, 1, 1}},
      {"2x3_s3x2_p1x0", {2, 4, 12, 9, 3, 2, 3, 3, 2, 1, 0, 1, 1}},
      {"3x3_big_pad", {1, 2, 5, 6, 3, 3, 3, 1, 1, 3, 2, 1, 1}},
      {"4x4_s2_p1_k1", {2, 3, 10, 13, 1, 4, 4, 2, 2, 1, 3, 1, 1}},
      {"1x1_s3_c3", {2, 3, 10, 11, 5, 1, 1, 3, 3, 0, 0, 1, 1}},
      {"3x3_d2_p2", {2, 3, 11, 9, 5, 3, 3, 1, 1, 2, 2, 2, 2}},
      {"3x3_s2_d3_p1", {3, 18, 13, 12, 4, 3, 3, 2, 2, 1, 1, 3, 3}},
      {"4x4_s2_p1_d1x2", {2, 3, 10, 13, 9, 4, 4, 2, 2, 1, 3, 1, 2}},
  };
}

bool dilated(const dnnk_conv_desc &d) { return d.dil_h > 1 || d.dil_w > 1; }

// Tolerance for sums of q products of values in [-1, 1).
double tol(int q) { return 1e-5 * (1 + q / 64.0); }

class BlockedTest : public testing::TestWithParam<BlockedCase> {};

// Tensors of a case: NCHW x, w, bias, dy and their blocked forms.
struct Tensors {
  dnnk_conv_desc d;
  int oh, ow;
  std::vector<float> x, w, b, dy, xb, dyb;
  explicit Tensors(const dnnk_conv_desc &desc) : d(desc) {
    oh = dnnk_conv_out_h(&d);
    ow = dnnk_conv_out_w(&d);
    x = random_floats((size_t)d.n * d.c * d.h * d.w, 1);
    w = random_floats((size_t)d.k * d.c * d.kh * d.kw, 2);
    b = random_floats(d.k, 3);
    dy = random_floats((size_t)d.n * d.k * oh * ow, 4);
    xb.assign(dnnk_blocked_size(d.n, d.c, d.h, d.w), 7.0f);
    dyb.assign(dnnk_blocked_size(d.n, d.k, oh, ow), 7.0f);
    dnnk_to_blocked(x.data(), d.n, d.c, d.h, d.w, xb.data());
    dnnk_to_blocked(dy.data(), d.n, d.k, oh, ow, dyb.data());
  }
  int q() const { return d.c * d.kh * d.kw; }
};

// Every padding lane of a blocked n x c x hw tensor is zero.
bool padding_zero(const std::vector<float> &t, int n, int c, long hw) {
  int cb = dnnk_channel_block(), nb = (c + cb - 1) / cb;
  for (int b = 0; b < n; ++b)
    for (long p = 0; p < hw; ++p)
      for (int i = c; i < nb * cb; ++i)
        if (t[(((size_t)b * nb + i / cb) * hw + p) * cb + i % cb] != 0.0f)
          return false;
  return true;
}

TEST(Blocked, RoundTripAndZeroPadding) {
  int cb = dnnk_channel_block();
  EXPECT_TRUE(cb == 4 || cb == 8 || cb == 16);
  for (int c : {1, cb - 1, cb, cb + 3, 3 * cb}) {
    std::vector<float> x = random_floats((size_t)2 * c * 5 * 3, 9), back;
    std::vector<float> xb(dnnk_blocked_size(2, c, 5, 3), 5.0f);
    EXPECT_EQ(xb.size(), (size_t)2 * ((c + cb - 1) / cb) * cb * 15);
    dnnk_to_blocked(x.data(), 2, c, 5, 3, xb.data());
    EXPECT_TRUE(padding_zero(xb, 2, c, 15)) << c;
    back.assign(x.size(), 0.0f);
    dnnk_from_blocked(xb.data(), 2, c, 5, 3, back.data());
    EXPECT_EQ(back, x) << c;
    // Element (b, ch, p) sits in block ch / cb, lane ch % cb.
    int nb = (c + cb - 1) / cb, ch = c - 1;
    EXPECT_EQ(xb[(((size_t)1 * nb + ch / cb) * 15 + 7) * cb + ch % cb],
              x[((size_t)1 * c + ch) * 15 + 7]);
  }
}

TEST_P(BlockedTest, ForwardMatchesReference) {
  Tensors t(GetParam().d);
  const dnnk_conv_desc &d = t.d;
  std::vector<float> want((size_t)d.n * d.k * t.oh * t.ow), got(want.size());
  if (dilated(d))
    dnnk_conv2d_forward_ex(&d, DNNK_NCHW, t.x.data(), t.w.data(), t.b.data(),
                           want.data(), nullptr, 0);
  else
    ref::conv_forward(d, t.x.data(), t.w.data(), t.b.data(), want.data());
  std::vector<float> yb(dnnk_blocked_size(d.n, d.k, t.oh, t.ow), 7.0f);
  size_t nws = dnnk_conv_workspace_fused(&d, DNNK_NCHWC, 0);
  std::vector<float> ws(nws);
  dnnk_conv2d_forward_ex(&d, DNNK_NCHWC, t.xb.data(), t.w.data(), t.b.data(),
                         yb.data(), ws.data(), nws);
  EXPECT_TRUE(padding_zero(yb, d.n, d.k, (long)t.oh * t.ow));
  dnnk_from_blocked(yb.data(), d.n, d.k, t.oh, t.ow, got.data());
  EXPECT_LE(max_rel_diff(got.data(), want.data(), got.size()), tol(t.q()));
  // No bias, no workspace (allocated).
  dnnk_conv2d_forward_ex(&d, DNNK_NCHWC, t.xb.data(), t.w.data(), nullptr,
                         yb.data(), nullptr, 0);
  dnnk_from_blocked(yb.data(), d.n, d.k, t.oh, t.ow, got.data());
  for (size_t i = 0; i < want.size(); ++i)
    want[i] -= t.b[i / ((size_t)t.oh * t.ow) % d.k];
  EXPECT_LE(max_rel_diff(got.data(), want.data(), got.size()), tol(t.q()));
}

TEST_P(BlockedTest, BackwardDataMatchesReference) {
  Tensors t(GetParam().d);
  const dnnk_conv_desc &d = t.d;
  std::vector<float> want(t.x.size()), got(t.x.size());
  if (dilated(d))
    dnnk_conv2d_backward_data_ex(&d, DNNK_NCHW, t.dy.data(), t.w.data(),
                                 want.data(), nullptr, 0);
  else
    ref::conv_backward_data(d, t.dy.data(), t.w.data(), want.data());
  std::vector<float> dxb(t.xb.size(), 7.0f);
  dnnk_conv2d_backward_data_ex(&d, DNNK_NCHWC, t.dyb.data(), t.w.data(),
                               dxb.data(), nullptr, 0);
  EXPECT_TRUE(padding_zero(dxb, d.n, d.c, (long)d.h * d.w));
  dnnk_from_blocked(dxb.data(), d.n, d.c, d.h, d.w, got.data());
  EXPECT_LE(max_rel_diff(got.data(), want.data(), got.size()),
            tol(d.k * d.kh * d.kw));
}

TEST_P(BlockedTest, BackwardWeightsMatchesReference) {
  Tensors t(GetParam().d);
  const dnnk_conv_desc &d = t.d;
  std::vector<float> want(t.w.size()), got(t.w.size(), 7.0f);
  std::vector<float> dbw(d.k), dbg(d.k, 7.0f);
  if (dilated(d))
    dnnk_conv2d_backward_weights_ex(&d, DNNK_NCHW, t.x.data(), t.dy.data(),
                                    want.data(), dbw.data(), nullptr, 0);
  else
    ref::conv_backward_weights(d, t.x.data(), t.dy.data(), want.data(),
                               dbw.data());
  int q = d.n * t.oh * t.ow;
  // Workspaces for every thread, for one, and none (allocated).
  for (int threads : {0, 1, -1}) {
    size_t nws =
        threads < 0 ? 0 : dnnk_conv_workspace_fused(&d, DNNK_NCHWC, threads);
    std::vector<float> ws(nws);
    dnnk_conv2d_backward_weights_ex(&d, DNNK_NCHWC, t.xb.data(), t.dyb.data(),
                                    got.data(), dbg.data(),
                                    nws ? ws.data() : nullptr, nws);
    EXPECT_LE(max_rel_diff(got.data(), want.data(), got.size()), tol(q))
        << threads;
    EXPECT_LE(max_rel_diff(dbg.data(), dbw.data(), dbg.size()), tol(q))
        << threads;
  }
  // Without a bias gradient.
  dnnk_conv2d_backward_weights_ex(&d, DNNK_NCHWC, t.xb.data(), t.dyb.data(),
                                  got.data(), nullptr, nullptr, 0);
  EXPECT_LE(max_rel_diff(got.data(), want.data(), got.size()), tol(q));
}

INSTANTIATE_TEST_SUITE_P(Shapes, BlockedTest,
                         testing::ValuesIn(blocked_cases()),
                         [](const testing::TestParamInfo<BlockedCase> &i) {
                           return std::string(i.param.name);
                         });

// The benchmark's ResNet shapes (small batch) against the reference.
TEST(Blocked, ResNetShapes) {
  for (dnnk_conv_desc d :
       {dnnk_conv_desc{2, 64, 16, 16, 64, 3, 3, 1, 1, 1, 1},
        dnnk_conv_desc{2, 32, 32, 32, 64, 3, 3, 2, 2, 1, 1},
        dnnk_conv_desc{2, 32, 32, 32, 64, 1, 1, 2, 2, 0, 0}}) {
    Tensors t(d);
    std::vector<float> want((size_t)d.n * d.k * t.oh * t.ow), got(want.size());
    ref::conv_forward(d, t.x.data(), t.w.data(), t.b.data(), want.data());
    std::vector<float> yb(dnnk_blocked_size(d.n, d.k, t.oh, t.ow));
    dnnk_conv2d_forward_ex(&d, DNNK_NCHWC, t.xb.data(), t.w.data(), t.b.data(),
                           yb.data(), nullptr, 0);
    dnnk_from_blocked(yb.data(), d.n, d.k, t.oh, t.ow, got.data());
    EXPECT_LE(max_rel_diff(got.data(), want.data(), got.size()), tol(t.q()));
    std::vector<float> dx(t.x.size()), dxr(t.x.size()), dxb(t.xb.size());
    ref::conv_backward_data(d, t.dy.data(), t.w.data(), dxr.data());
    dnnk_conv2d_backward_data_ex(&d, DNNK_NCHWC, t.dyb.data(), t.w.data(),
                                 dxb.data(), nullptr, 0);
    dnnk_from_blocked(dxb.data(), d.n, d.c, d.h, d.w, dx.data());
    EXPECT_LE(max_rel_diff(dx.data(), dxr.data(), dx.size()), tol(576));
    std::vector<float> dw(t.w.size()), dwr(t.w.size()), db(d.k), dbr(d.k);
    ref::conv_backward_weights(d, t.x.data(), t.dy.data(), dwr.data(),
                               dbr.data());
    dnnk_conv2d_backward_weights_ex(&d, DNNK_NCHWC, t.xb.data(), t.dyb.data(),
                                    dw.data(), db.data(), nullptr, 0);
    EXPECT_LE(max_rel_diff(dw.data(), dwr.data(), dw.size()), tol(512));
    EXPECT_LE(max_rel_diff(db.data(), dbr.data(), db.size()), tol(512));
  }
}

// Exact sums: the blocked passes give the NCHW bits at any thread count.
TEST(Blocked, GoldenNchwBitsOnEveryThreadCount) {
  int keep = omp_get_max_threads();
  EXPECT_EQ(dnnk_conv_golden_layout_hash(DNNK_NCHW), DNNK_CONV_GOLDEN_NCHW);
  for (int t : {1, 2, 3}) {
    omp_set_num_threads(t);
    EXPECT_EQ(dnnk_conv_golden_layout_hash(DNNK_NCHWC), DNNK_CONV_GOLDEN_NCHW)
        << t << " threads";
  }
  omp_set_num_threads(keep);
}

} // namespace
