// Convolution passes against direct reference loops on odd shapes, plus
// finite-difference checks of the backward passes, and im2col/col2im
// adjointness.
#include <gtest/gtest.h>

#include <cmath>

#include "dnnk.h"
#include "reference.h"

namespace {

// A named convolution shape.
struct ConvCase {
  const char *name;
  dnnk_conv_desc d;
};

// Shapes: stride 2, padding 1, 1x1, 5x5, rectangular, batch 1 and 64.
std::vector<ConvCase> conv_cases() {
  // n, c, h, w, k, kh, kw, sh, sw, ph, pw
  return {
      {"3x3_s1_p1_n1", {1, 3, 7, 9, 4, 3, 3, 1, 1, 1, 1}},
      {"3x3_s2_p1_n2", {2, 5, 11, 10, 6, 3, 3, 2, 2, 1, 1}},
      {"1x1_s1_p0_n3", {3, 16, 5, 7, 8, 1, 1, 1, 1, 0, 0}},
      {"1x1_s2_p0_n2", {2, 6, 9, 8, 5, 1, 1, 2, 2, 0, 0}},
      {"5x5_s1_p2_n2", {2, 3, 12, 11, 7, 5, 5, 1, 1, 2, 2}},
      {"5x5_s1_p0_n1", {1, 1, 13, 13, 6, 5, 5, 1, 1, 0, 0}},
      {"3x5_s2x1_p1x2", {2, 4, 9, 10, 3, 3, 5, 2, 1, 1, 2}},
      {"3x3_s2_p0_odd", {1, 2, 8, 8, 3, 3, 3, 2, 2, 0, 0}},
      {"3x3_s1_p1_n64", {64, 3, 6, 6, 8, 3, 3, 1, 1, 1, 1}},
      {"5x5_s2_p2_n64", {64, 2, 7, 7, 4, 5, 5, 2, 2, 2, 2}},
  };
}

// Tensors of one case: input, weights, bias and an output-shaped gradient.
struct ConvData {
  dnnk_conv_desc d;
  int oh, ow;
  std::vector<float> x, w, bias, dy;
  explicit ConvData(const dnnk_conv_desc &desc) : d(desc) {
    oh = dnnk_conv_out_h(&d);
    ow = dnnk_conv_out_w(&d);
    x = random_floats((size_t)d.n * d.c * d.h * d.w, 11);
    w = random_floats((size_t)d.k * d.c * d.kh * d.kw, 12);
    bias = random_floats(d.k, 13);
    dy = random_floats(out_size(), 14);
  }
  size_t out_size() const { return (size_t)d.n * d.k * oh * ow; }
};

class ConvTest : public testing::TestWithParam<ConvCase> {};

// Tolerance of float GEMM sums of q products against double references.
double tol(int q) { return 1e-5 * std::sqrt((double)q) + 1e-6; }

TEST_P(ConvTest, ForwardMatchesDirect) {
  ConvData t(GetParam().d);
  std::vector<float> want(t.out_size()), got(t.out_size());
  ref::conv_forward(t.d, t.x.data(), t.w.data(), t.bias.data(), want.data());
  std::vector<float> ws(dnnk_conv_workspace(&t.d));
  dnnk_conv2d_forward(&t.d, t.x.data(), t.w.data(), t.bias.data(), got.data(),
                      ws.data());
  EXPECT_LE(max_rel_diff(got.data(), want.data(), got.size()),
            tol(t.d.c * t.d.kh * t.d.kw));
  // Without bias and with an internally allocated workspace.
  ref::conv_forward(t.d, t.x.data(), t.w.data(), nullptr, want.data());
  dnnk_conv2d_forward(&t.d, t.x.data(), t.w.data(), nullptr, got.data(),
                      nullptr);
  EXPECT_LE(max_rel_diff(got.data(), want.data(), got.size()),
            tol(t.d.c * t.d.kh * t.d.kw));
}

TEST_P(ConvTest, BackwardDataMatchesDirect) {
  ConvData t(GetParam().d);
  std::vector<float> want(t.x.size()), got(t.x.size(), NAN);
  ref::conv_backward_data(t.d, t.dy.data(), t.w.data(), want.data());
  dnnk_conv2d_backward_data(&t.d, t.dy.data(), t.w.data(), got.data(), nullptr);
  EXPECT_LE(max_rel_diff(got.data(), want.data(), got.size()),
            tol(t.d.k * t.d.kh * t.d.kw));
}

TEST_P(ConvTest, BackwardWeightsMatchesDirect) {
  ConvData t(GetParam().d);
  std::vector<float> want(t.w.size()), got(t.w.size(), NAN);
  std::vector<float> dbw(t.d.k), dbg(t.d.k, NAN);
  ref::conv_backward_weights(t.d, t.x.data(), t.dy.data(), want.data(),
                             dbw.data());
  std::vector<float> ws(dnnk_conv_workspace(&t.d));
  dnnk_conv2d_backward_weights(&t.d, t.x.data(), t.dy.data(), got.data(),
                               dbg.data(), ws.data());
  double q = (double)t.d.n * t.oh * t.ow;
  EXPECT_LE(max_rel_diff(got.data(), want.data(), got.size()), tol((int)q));
  EXPECT_LE(max_rel_diff(dbg.data(), dbw.data(), dbg.size()), tol((int)q));
}

// L = sum(conv(x, w) * r): linear in x and w, so central differences are
// exact up to rounding and dL/dx, dL/dw are the backward passes applied to r.
double loss(const dnnk_conv_desc &d, const std::vector<float> &x,
            const std::vector<float> &w, const std::vector<float> &r) {
  std::vector<float> y(r.size());
  dnnk_conv2d_forward(&d, x.data(), w.data(), nullptr, y.data(), nullptr);
  double s = 0.0;
  for (size_t i = 0; i < y.size(); ++i)
    s += (double)y[i] * r[i];
  return s;
}

// Central difference of loss() along one coordinate of v.
double numeric_grad(const dnnk_conv_desc &d, std::vector<float> &x,
                    std::vector<float> &w, const std::vector<float> &r,
                    std::vector<float> &v, size_t i) {
  const float eps = 1e-2f;
  float keep = v[i];
  v[i] = keep + eps;
  double up = loss(d, x, w, r);
  v[i] = keep - eps;
  double down = loss(d, x, w, r);
  v[i] = keep;
  return (up - down) / (2.0 * eps);
}

TEST_P(ConvTest, GradientsMatchFiniteDifferences) {
  ConvData t(GetParam().d);
  if (t.d.n > 8)
    GTEST_SKIP() << "covered by the small batches; each probe is a forward";
  std::vector<float> dx(t.x.size()), dw(t.w.size());
  dnnk_conv2d_backward_data(&t.d, t.dy.data(), t.w.data(), dx.data(), nullptr);
  dnnk_conv2d_backward_weights(&t.d, t.x.data(), t.dy.data(), dw.data(),
                               nullptr, nullptr);
  std::mt19937 gen(5);
  for (int probe = 0; probe < 12; ++probe) {
    size_t i = gen() % t.x.size();
    double num = numeric_grad(t.d, t.x, t.w, t.dy, t.x, i);
    EXPECT_NEAR(dx[i], num, 2e-3 * (1 + std::fabs(num))) << "dx[" << i << "]";
    size_t j = gen() % t.w.size();
    num = numeric_grad(t.d, t.x, t.w, t.dy, t.w, j);
    EXPECT_NEAR(dw[j], num, 2e-3 * (1 + std::fabs(num))) << "dw[" << j << "]";
  }
}

TEST_P(ConvTest, Col2imIsAdjointOfIm2col) {
  // <im2col(x), c> == <x, col2im(c)> for one image.
  dnnk_conv_desc d = GetParam().d;
  int oh = dnnk_conv_out_h(&d), ow = dnnk_conv_out_w(&d);
  long rows = (long)d.c * d.kh * d.kw, cols = (long)oh * ow;
  auto x = random_floats((size_t)d.c * d.h * d.w, 21);
  auto c = random_floats((size_t)rows * cols, 22);
  std::vector<float> col(rows * cols), back(x.size());
  dnnk_im2col(x.data(), d.c, d.h, d.w, d.kh, d.kw, d.stride_h, d.stride_w,
              d.pad_h, d.pad_w, col.data(), cols);
  dnnk_col2im(c.data(), cols, d.c, d.h, d.w, d.kh, d.kw, d.stride_h, d.stride_w,
              d.pad_h, d.pad_w, back.data());
  double lhs = 0, rhs = 0;
  for (size_t i = 0; i < col.size(); ++i)
    lhs += (double)col[i] * c[i];
  for (size_t i = 0; i < x.size(); ++i)
    rhs += (double)x[i] * back[i];
  EXPECT_NEAR(lhs, rhs, 1e-4 * (1 + std::fabs(lhs)));
}

INSTANTIATE_TEST_SUITE_P(Shapes, ConvTest, testing::ValuesIn(conv_cases()),
                         [](const testing::TestParamInfo<ConvCase> &info) {
                           return std::string(info.param.name);
                         });

TEST(Conv, OutputSizes) {
  dnnk_conv_desc d = {1, 1, 32, 28, 1, 5, 3, 2, 1, 2, 0};
  EXPECT_EQ(dnnk_conv_out_h(&d), 16); // (32 + 4 - 5) / 2 + 1
  EXPECT_EQ(dnnk_conv_out_w(&d), 26); // (28 - 3) / 1 + 1
  EXPECT_EQ(dnnk_conv_workspace(&d), (size_t)(15 + 1) * 16 * 26);
}

TEST(Conv, Im2colKnownValues) {
  // 1 channel 3x3 image, 2x2 kernel, stride 1, padding 0: four columns.
  float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  float col[16];
  dnnk_im2col(x, 1, 3, 3, 2, 2, 1, 1, 0, 0, col, 4);
  float want[16] = {1, 2, 4, 5, 2, 3, 5, 6, 4, 5, 7, 8, 5, 6, 8, 9};
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(col[i], want[i]) << i;
}

TEST(Conv, Im2colWritesNoFurtherThanEachRow) {
  // A 2x6 kernel with 2 columns of padding on a 2x2 image: one output, and
  // the taps in the padding reach past it. The gap up to ldcol is the
  // caller's.
  float x[4] = {1, 2, 3, 4};
  const long ld = 4, rows = 12;
  std::vector<float> col(rows * ld, -7.0f);
  dnnk_im2col(x, 1, 2, 2, 2, 6, 1, 1, 0, 2, col.data(), ld);
  for (long r = 0; r < rows; ++r)
    for (long j = 1; j < ld; ++j)
      EXPECT_EQ(col[r * ld + j], -7.0f) << "row " << r << " column " << j;
}

TEST(Conv, InvalidLayersAreNamed) {
  dnnk_conv_desc ok = {2, 3, 8, 8, 4, 3, 3, 1, 1, 1, 1};
  EXPECT_EQ(dnnk_conv_check(&ok), nullptr);
  auto why = [&](auto change) {
    dnnk_conv_desc d = ok;
    change(d);
    const char *w = dnnk_conv_check(&d);
    return std::string(w ? w : "(valid)");
  };
  EXPECT_NE(why([](auto &d) { d.stride_h = 0; }).find("strides"),
            std::string::npos);
  EXPECT_NE(why([](auto &d) { d.c = 0; }).find("input channels"),
            std::string::npos);
  EXPECT_NE(why([](auto &d) { d.kw = -1; }).find("kernel sizes"),
            std::string::npos);
  EXPECT_NE(why([](auto &d) { d.pad_w = -1; }).find("negative"),
            std::string::npos);
  // (3 - 5) / 4 + 1 is 1 in C: the kernel still does not fit.
  dnnk_conv_desc wide = {1, 1, 3, 3, 1, 5, 5, 4, 4, 0, 0};
  EXPECT_EQ(dnnk_conv_out_h(&wide), 0);
  EXPECT_NE(std::string(dnnk_conv_check(&wide)).find("taller"),
            std::string::npos);
  EXPECT_NE(why([](auto &d) { d.n = 1 << 20, d.c = 1 << 12; }).find("large"),
            std::string::npos);
}

TEST(ConvDeathTest, PassesStopOnInvalidLayers) {
  dnnk_conv_desc d = {1, 0, 8, 8, 4, 3, 3, 1, 1, 1, 1};
  std::vector<float> buf(4096);
  EXPECT_DEATH(dnnk_conv2d_forward(&d, buf.data(), buf.data(), nullptr,
                                   buf.data(), nullptr),
               "dnnk error: dnnk_conv2d_forward: invalid convolution: the "
               "batch, input channels");
  d = {1, 1, 3, 3, 1, 5, 5, 1, 1, 0, 0};
  EXPECT_DEATH(dnnk_conv2d_backward_weights_ex(&d, DNNK_NCHWC, buf.data(),
                                               buf.data(), buf.data(), nullptr,
                                               nullptr, 0),
               "dnnk_conv2d_backward_weights: invalid convolution: the kernel");
  EXPECT_DEATH(dnnk_conv_workspace_fused(&d, DNNK_NCHW, 2),
               "dnnk_conv_workspace_fused: invalid");
  EXPECT_DEATH(
      dnnk_im2col(buf.data(), 1, 4, 4, 3, 3, 1, 1, 0, 0, buf.data(), 3),
      "dnnk_im2col: ldcol is below");
}

} // namespace
