// Bias, ReLU, max-pooling, fully connected and softmax cross-entropy layers
// against direct loops and finite differences, and a small CNN that learns.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

#include "dnnk.h"
#include "reference.h"

namespace {

TEST(Bias, ForwardAndBackward) {
  int n = 3, c = 5, hw = 7;
  auto x = random_floats(n * c * hw, 1), b = random_floats(c, 2);
  std::vector<float> y(x.size());
  dnnk_bias_forward(x.data(), b.data(), n, c, hw, y.data());
  for (int i = 0; i < n * c * hw; ++i)
    ASSERT_EQ(y[i], x[i] + b[i / hw % c]);
  std::vector<float> db(c);
  dnnk_bias_backward(x.data(), n, c, hw, db.data());
  for (int ci = 0; ci < c; ++ci) {
    double s = 0;
    for (int bi = 0; bi < n; ++bi)
      for (int i = 0; i < hw; ++i)
        s += x[(bi * c + ci) * hw + i];
    EXPECT_NEAR(db[ci], s, 1e-5);
  }
}

TEST(Relu, ForwardAndBackward) {
  auto x = random_floats(100001, 3); // odd count, above the parallel cut-off
  auto dy = random_floats(x.size(), 4);
  std::vector<float> y(x.size()), dx(x.size());
  dnnk_relu_forward(x.data(), (long)x.size(), y.data());
  dnnk_relu_backward(x.data(), dy.data(), (long)x.size(), dx.data());
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(y[i], std::max(x[i], 0.0f));
    ASSERT_EQ(dx[i], x[i] > 0 ? dy[i] : 0.0f);
  }
}

// Max-pooling shapes: 2x2/2, overlapping 3x3/2 with padding, odd sizes.
std::vector<dnnk_pool_desc> pool_cases() {
  // n, c, h, w, kh, kw, sh, sw, ph, pw
  return {{2, 3, 8, 8, 2, 2, 2, 2, 0, 0},
          {1, 2, 7, 9, 3, 3, 2, 2, 1, 1},
          {3, 1, 5, 6, 2, 3, 1, 2, 0, 1},
          {64, 2, 4, 4, 2, 2, 2, 2, 0, 0},
          {2, 3, 7, 9, 2, 2, 2, 2, 0, 0}};
}

TEST(MaxPool, ForwardMatchesDirect) {
  for (const auto &d : pool_cases()) {
    int oh = dnnk_pool_out_h(&d), ow = dnnk_pool_out_w(&d);
    size_t out = (size_t)d.n * d.c * oh * ow;
    auto x = random_floats((size_t)d.n * d.c * d.h * d.w, 5);
    std::vector<float> y(out), yr(out);
    std::vector<int32_t> a(out), ar(out);
    dnnk_maxpool_forward(&d, x.data(), y.data(), a.data());
    ref::maxpool_forward(d, x.data(), yr.data(), ar.data());
    EXPECT_EQ(y, yr);
    EXPECT_EQ(a, ar);
  }
}

// After a ReLU most windows hold ties (zeros); a NaN must not win either.
// The first maximum is the one taken, as in the reference.
TEST(MaxPool, TiesAndNaNKeepTheFirstMaximum) {
  for (const auto &d : pool_cases()) {
    int oh = dnnk_pool_out_h(&d), ow = dnnk_pool_out_w(&d);
    size_t out = (size_t)d.n * d.c * oh * ow;
    auto x = random_floats((size_t)d.n * d.c * d.h * d.w, 8);
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = i % 11 == 3 ? NAN : x[i] < 0.3f ? 0.0f : x[i];
    std::vector<float> y(out), yr(out);
    std::vector<int32_t> a(out), ar(out);
    dnnk_maxpool_forward(&d, x.data(), y.data(), a.data());
    ref::maxpool_forward(d, x.data(), yr.data(), ar.data());
    EXPECT_EQ(a, ar);
    EXPECT_EQ(0, std::memcmp(y.data(), yr.data(), out * sizeof(float)));
  }
}

TEST(MaxPool, BackwardMatchesFiniteDifferences) {
  for (const auto &d : pool_cases()) {
    int oh = dnnk_pool_out_h(&d), ow = dnnk_pool_out_w(&d);
    size_t out = (size_t)d.n * d.c * oh * ow;
    auto x = random_floats((size_t)d.n * d.c * d.h * d.w, 6);
    auto r = random_floats(out, 7);
    std::vector<float> y(out), dx(x.size());
    std::vector<int32_t> a(out);
    dnnk_maxpool_forward(&d, x.data(), y.data(), a.data());
    dnnk_maxpool_backward(&d, r.data(), a.data(), dx.data());
    // L = sum(pool(x) * r); small steps keep every argmax in place.
    auto loss = [&](const std::vector<float> &xx) {
      std::vector<float> yy(out);
      dnnk_maxpool_forward(&d, xx.data(), yy.data(), nullptr);
      double s = 0;
      for (size_t i = 0; i < out; ++i)
        s += (double)yy[i] * r[i];
      return s;
    };
    for (size_t i = 0; i < x.size(); i += 7) {
      auto xp = x, xm = x;
      xp[i] += 1e-4f;
      xm[i] -= 1e-4f;
      double num = (loss(xp) - loss(xm)) / (2e-4);
      EXPECT_NEAR(dx[i], num, 1e-2) << i;
    }
  }
}

TEST(FullyConnected, ForwardBackwardMatchReference) {
  int n = 5, in = 37, out = 11;
  auto x = random_floats(n * in, 8), w = random_floats(out * in, 9);
  auto b = random_floats(out, 10), dy = random_floats(n * out, 11);
  std::vector<float> y(n * out), yr(n * out);
  dnnk_fc_forward(x.data(), w.data(), b.data(), n, in, out, y.data());
  ref::gemm(0, 1, n, out, in, 1.0f, x.data(), in, w.data(), in, 0.0f, yr.data(),
            out);
  for (int i = 0; i < n * out; ++i)
    yr[i] += b[i % out];
  EXPECT_LE(max_rel_diff(y.data(), yr.data(), y.size()), 1e-5);

  std::vector<float> dx(n * in), dw(out * in), db(out);
  std::vector<float> dxr(n * in), dwr(out * in);
  dnnk_fc_backward(x.data(), w.data(), dy.data(), n, in, out, dx.data(),
                   dw.data(), db.data());
  ref::gemm(0, 0, n, in, out, 1.0f, dy.data(), out, w.data(), in, 0.0f,
            dxr.data(), in);
  ref::gemm(1, 0, out, in, n, 1.0f, dy.data(), out, x.data(), in, 0.0f,
            dwr.data(), in);
  EXPECT_LE(max_rel_diff(dx.data(), dxr.data(), dx.size()), 1e-5);
  EXPECT_LE(max_rel_diff(dw.data(), dwr.data(), dw.size()), 1e-5);
  for (int o = 0; o < out; ++o) {
    double s = 0;
    for (int bi = 0; bi < n; ++bi)
      s += dy[bi * out + o];
    EXPECT_NEAR(db[o], s, 1e-5);
  }
}

TEST(SoftmaxXent, ValuesAndGradient) {
  int n = 4, classes = 10;
  auto z = random_floats(n * classes, 12, -5.0f, 5.0f);
  z[3] = 80.0f; // large logit: the max shift must prevent overflow
  std::vector<int32_t> labels = {0, 3, 9, 5};
  std::vector<float> p(z.size()), g(z.size());
  float l =
      dnnk_softmax_xent_forward(z.data(), labels.data(), n, classes, p.data());
  double want = 0;
  for (int b = 0; b < n; ++b) {
    double m = *std::max_element(&z[b * classes], &z[b * classes] + classes);
    double s = 0;
    for (int j = 0; j < classes; ++j)
      s += std::exp((double)z[b * classes + j] - m);
    for (int j = 0; j < classes; ++j)
      EXPECT_NEAR(p[b * classes + j],
                  std::exp((double)z[b * classes + j] - m) / s, 1e-6);
    want += std::log(s) - (z[b * classes + labels[b]] - m);
  }
  EXPECT_NEAR(l, want / n, 1e-5);
  dnnk_softmax_xent_backward(p.data(), labels.data(), n, classes, g.data());
  for (size_t i = 0; i < z.size(); i += 3) {
    auto zp = z, zm = z;
    const float eps = 1e-2f;
    zp[i] += eps;
    zm[i] -= eps;
    double lp = dnnk_softmax_xent_forward(zp.data(), labels.data(), n, classes,
                                          p.data());
    double lm = dnnk_softmax_xent_forward(zm.data(), labels.data(), n, classes,
                                          p.data());
    EXPECT_NEAR(g[i], (lp - lm) / (2 * eps), 2e-3) << i;
  }
}

// A LeNet-like net, conv(1->4, 3x3, pad 1) -> ReLU -> maxpool 2x2 -> FC
// (4*4*4 -> 2), trained by SGD to tell bright-left from bright-right 8x8
// images: every forward and backward routine in one loop.
TEST(SmallCnn, LossDecreases) {
  const int n = 16, h = 8, w = 8, k = 4, classes = 2, feat = k * 4 * 4;
  dnnk_conv_desc cd = {n, 1, h, w, k, 3, 3, 1, 1, 1, 1};
  dnnk_pool_desc pd = {n, k, h, w, 2, 2, 2, 2, 0, 0};
  std::vector<float> x(n * h * w);
  std::vector<int32_t> labels(n);
  std::mt19937 gen(3);
  for (int b = 0; b < n; ++b) {
    labels[b] = b % 2;
    for (int i = 0; i < h * w; ++i) {
      bool left = i % w < w / 2;
      x[b * h * w + i] = (left == (labels[b] == 0) ? 1.0f : 0.0f) +
                         0.3f * (gen() % 100) / 100.0f;
    }
  }
  auto cw = random_floats(k * 9, 4, -0.3f, 0.3f), cb = std::vector<float>(k);
  auto fw = random_floats(classes * feat, 5, -0.1f, 0.1f);
  std::vector<float> fb(classes), a1(n * k * h * w), r1(a1.size());
  std::vector<float> p1(n * feat), z(n * classes), prob(z.size());
  std::vector<float> dz(z.size()), dp1(p1.size()), dr1(r1.size());
  std::vector<float> da1(a1.size()), dcw(cw.size()), dcb(k);
  std::vector<float> dfw(fw.size()), dfb(classes), ws(dnnk_conv_workspace(&cd));
  std::vector<int32_t> arg(p1.size());
  float first = 0, last = 0;
  for (int it = 0; it < 60; ++it) {
    dnnk_conv2d_forward(&cd, x.data(), cw.data(), cb.data(), a1.data(),
                        ws.data());
    dnnk_relu_forward(a1.data(), (long)a1.size(), r1.data());
    dnnk_maxpool_forward(&pd, r1.data(), p1.data(), arg.data());
    dnnk_fc_forward(p1.data(), fw.data(), fb.data(), n, feat, classes,
                    z.data());
    float l = dnnk_softmax_xent_forward(z.data(), labels.data(), n, classes,
                                        prob.data());
    if (it == 0)
      first = l;
    last = l;
    dnnk_softmax_xent_backward(prob.data(), labels.data(), n, classes,
                               dz.data());
    dnnk_fc_backward(p1.data(), fw.data(), dz.data(), n, feat, classes,
                     dp1.data(), dfw.data(), dfb.data());
    dnnk_maxpool_backward(&pd, dp1.data(), arg.data(), dr1.data());
    dnnk_relu_backward(a1.data(), dr1.data(), (long)a1.size(), da1.data());
    dnnk_conv2d_backward_weights(&cd, x.data(), da1.data(), dcw.data(),
                                 dcb.data(), ws.data());
    const float lr = 0.2f;
    for (size_t i = 0; i < cw.size(); ++i)
      cw[i] -= lr * dcw[i];
    for (int i = 0; i < k; ++i)
      cb[i] -= lr * dcb[i];
    for (size_t i = 0; i < fw.size(); ++i)
      fw[i] -= lr * dfw[i];
    for (int i = 0; i < classes; ++i)
      fb[i] -= lr * dfb[i];
  }
  EXPECT_LT(last, 0.25f * first) << "first " << first << " last " << last;
}

} // namespace
