// The fused (convGemm) passes on both layouts, with dilation and strides
// beyond the kernel, against direct loops; finite differences of their
// gradients; workspace sizes and bounds.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <omp.h>

#include <random>
#include <sys/resource.h>
#include <unistd.h>

#include "conv_golden.h"
#include "dnnk.h"
#include "reference.h"

namespace {

// A shape and a layout.
struct FusedCase {
  const char *name;
  dnnk_conv_desc d;
  int layout;
};

// Odd shapes: dilation, stride above the kernel, 1 input or output channel,
// more than one depth slice (c * kh * kw > 256), columns not a tile
// multiple, enough column blocks that every thread takes some, and images
// read where they are (no padding needed), a strided layer whose dW is
// wide enough for the transposed outer products, and pointwise strided
// layers (conv1x1.c): odd widths, one strided axis, more channels than a
// depth slice, rows wider than a work item, a partial block of rows; and
// one input channel (conv_c1.c): widths past a tile, padding above the
// kernel's reach in either axis, a partial last row tile, a single image.
std::vector<FusedCase> fused_cases() {
  // n, c, h, w, k, kh, kw, sh, sw, ph, pw, dh, dw
  std::vector<FusedCase> base = {
      {"3x3_d2_p2", {2, 3, 11, 9, 5, 3, 3, 1, 1, 2, 2, 2, 2}, 0},
      {"3x3_s2_d3_p1", {3, 2, 13, 12, 4, 3, 3, 2, 2, 1, 1, 3, 3}, 0},
      {"1x1_s3", {2, 5, 10, 11, 7, 1, 1, 3, 3, 0, 0, 1, 1}, 0},
      {"2x3_s3x2_p1x0", {2, 4, 12, 9, 3, 2, 3, 3, 2, 1, 0, 1, 1}, 0},
      {"5x5_c1_k6_p2", {5, 1, 12, 12, 6, 5, 5, 1, 1, 2, 2, 1, 1}, 0},
      {"3x3_c6_k1", {3, 6, 9, 10, 1, 3, 3, 1, 1, 1, 1, 1, 1}, 0},
      {"3x3_deep_c40", {2, 40, 7, 6, 19, 3, 3, 1, 1, 1, 1, 1, 1}, 0},
      {"4x4_s2_p1_d1x2", {2, 3, 10, 13, 9, 4, 4, 2, 2, 1, 3, 1, 2}, 0},
      {"3x3_n1_big_p", {1, 2, 5, 6, 3, 3, 3, 1, 1, 3, 2, 1, 1}, 0},
      {"3x3_n16_blocks", {16, 8, 24, 24, 16, 3, 3, 1, 1, 1, 1, 1, 1}, 0},
      {"3x3_p0_read_in_place", {3, 4, 9, 8, 5, 3, 3, 1, 1, 0, 0, 1, 1}, 0},
      {"3x3_s2_wide_dw", {2, 12, 11, 10, 10, 3, 3, 2, 2, 1, 1, 1, 1}, 0},
      {"1x1_s2_odd_w", {3, 7, 11, 13, 9, 1, 1, 2, 2, 0, 0, 1, 1}, 0},
      {"1x1_s2x1", {2, 6, 10, 9, 5, 1, 1, 2, 1, 0, 0, 1, 1}, 0},
      {"1x1_s1x3", {2, 3, 8, 20, 4, 1, 1, 1, 3, 0, 0, 1, 1}, 0},
      {"1x1_s2_deep_c300_k270", {2, 300, 6, 8, 270, 1, 1, 2, 2, 0, 0, 1, 1}, 0},
      {"1x1_s2_row_wider_than_an_item",
       {1, 3, 5, 600, 4, 1, 1, 2, 2, 0, 0, 1, 1},
       0},
      {"1x1_s2_row_blocks", {2, 4, 70, 20, 6, 1, 1, 2, 2, 0, 0, 1, 1}, 0},
      {"3x3_c1_k40_p0_w37", {2, 1, 9, 37, 40, 3, 3, 1, 1, 0, 0, 1, 1}, 0},
      {"5x3_c1_pad_above_kernel", {3, 1, 10, 7, 5, 5, 3, 1, 1, 3, 4, 1, 1}, 0},
      {"2x2_c1_n1", {1, 1, 6, 5, 3, 2, 2, 1, 1, 1, 1, 1, 1}, 0},
      {"3x3_c1_pad_rows_past_kernel",
       {2, 1, 7, 9, 4, 3, 3, 1, 1, 4, 1, 1, 1},
       0},
      {"5x5_c1_k3_tall", {2, 1, 23, 5, 3, 5, 5, 1, 1, 2, 2, 1, 1}, 0},
      {"2x2_c1_pad_past_reach", {1, 1, 4, 5, 2, 2, 2, 1, 1, 5, 1, 1, 1}, 0},
  };
  std::vector<FusedCase> all;
  for (FusedCase c : base) {
    all.push_back(c);
    c.layout = DNNK_NHWC;
    all.push_back(c);
  }
  return all;
}

// Output size of an axis with dilation.
int out_dim(int in, int k, int s, int p, int dl) {
  return (in + 2 * p - dl * (k - 1) - 1) / s + 1;
}

// Index of (b, c, y, x) in an n x c x h x w tensor of the given layout.
size_t at(int layout, int b, int c, int y, int x, int C, int H, int W) {
  if (layout == DNNK_NHWC)
    return (((size_t)b * H + y) * W + x) * C + c;
  return (((size_t)b * C + c) * H + y) * W + x;
}

// Direct loops over the convolution's definition, in double: y = conv(x, w)
// + bias, and its adjoints dx = conv^T(dy), dw, db (any output may be null).
struct Direct {
  dnnk_conv_desc d;
  int layout, oh, ow;
  Direct(const dnnk_conv_desc &desc, int lay) : d(desc), layout(lay) {
    oh = out_dim(d.h, d.kh, d.stride_h, d.pad_h, d.dil_h);
    ow = out_dim(d.w, d.kw, d.stride_w, d.pad_w, d.dil_w);
  }
  // Calls f(b, k, oy, ox, c, y, x, weight index) for every product term.
  template <class F> void each(F f) const {
    for (int b = 0; b < d.n; ++b)
      for (int k = 0; k < d.k; ++k)
        for (int oy = 0; oy < oh; ++oy)
          for (int ox = 0; ox < ow; ++ox)
            for (int c = 0; c < d.c; ++c)
              for (int i = 0; i < d.kh; ++i)
                for (int j = 0; j < d.kw; ++j) {
                  int yy = oy * d.stride_h - d.pad_h + i * d.dil_h;
                  int xx = ox * d.stride_w - d.pad_w + j * d.dil_w;
                  if (yy < 0 || yy >= d.h || xx < 0 || xx >= d.w)
                    continue;
                  f(at(layout, b, k, oy, ox, d.k, oh, ow),
                    at(layout, b, c, yy, xx, d.c, d.h, d.w),
                    (((size_t)k * d.c + c) * d.kh + i) * d.kw + j, k);
                }
  }
  std::vector<float> forward(const std::vector<float> &x,
                             const std::vector<float> &w,
                             const float *bias) const {
    std::vector<double> y((size_t)d.n * d.k * oh * ow, 0.0);
    each([&](size_t yi, size_t xi, size_t wi, int) { y[yi] += x[xi] * w[wi]; });
    std::vector<float> out(y.size());
    for (int b = 0; b < d.n; ++b)
      for (int k = 0; k < d.k; ++k)
        for (int oy = 0; oy < oh; ++oy)
          for (int ox = 0; ox < ow; ++ox) {
            size_t i = at(layout, b, k, oy, ox, d.k, oh, ow);
            out[i] = (float)(y[i] + (bias ? bias[k] : 0.0));
          }
    return out;
  }
  std::vector<float> backward_data(const std::vector<float> &dy,
                                   const std::vector<float> &w) const {
    std::vector<double> dx((size_t)d.n * d.c * d.h * d.w, 0.0);
    each([&](size_t yi, size_t xi, size_t wi, int) {
      dx[xi] += (double)dy[yi] * w[wi];
    });
    return std::vector<float>(dx.begin(), dx.end());
  }
  std::vector<float> backward_weights(const std::vector<float> &x,
                                      const std::vector<float> &dy,
                                      std::vector<float> &db) const {
    std::vector<double> dw((size_t)d.k * d.c * d.kh * d.kw, 0.0);
    each([&](size_t yi, size_t xi, size_t wi, int) {
      dw[wi] += (double)dy[yi] * x[xi];
    });
    std::vector<double> b(d.k, 0.0);
    for (int n = 0; n < d.n; ++n)
      for (int k = 0; k < d.k; ++k)
        for (int oy = 0; oy < oh; ++oy)
          for (int ox = 0; ox < ow; ++ox)
            b[k] += dy[at(layout, n, k, oy, ox, d.k, oh, ow)];
    db.assign(b.begin(), b.end());
    return std::vector<float>(dw.begin(), dw.end());
  }
};

// Tensors of one case.
struct Data {
  Direct ref;
  std::vector<float> x, w, bias, dy;
  explicit Data(const FusedCase &c) : ref(c.d, c.layout) {
    const dnnk_conv_desc &d = c.d;
    x = random_floats((size_t)d.n * d.c * d.h * d.w, 31);
    w = random_floats((size_t)d.k * d.c * d.kh * d.kw, 32);
    bias = random_floats(d.k, 33);
    dy = random_floats((size_t)d.n * d.k * ref.oh * ref.ow, 34);
  }
};

// Float sums of q products against double references.
double tol(long q) { return 1e-5 * std::sqrt((double)q) + 1e-6; }

class FusedTest : public testing::TestWithParam<FusedCase> {};

// A workspace with a canary tail: the passes must stay inside ws_floats.
struct GuardedWs {
  std::vector<float> v;
  size_t n;
  explicit GuardedWs(size_t floats) : v(floats + 4096, 777.0f), n(floats) {}
  bool intact() const {
    for (size_t i = n; i < v.size(); ++i)
      if (v[i] != 777.0f)
        return false;
    return true;
  }
};

TEST_P(FusedTest, ForwardMatchesDirect) {
  const FusedCase &c = GetParam();
  Data t(c);
  ASSERT_EQ(dnnk_conv_out_h(&c.d), t.ref.oh);
  ASSERT_EQ(dnnk_conv_out_w(&c.d), t.ref.ow);
  std::vector<float> want = t.ref.forward(t.x, t.w, t.bias.data());
  std::vector<float> got(want.size(), NAN);
  GuardedWs ws(dnnk_conv_workspace_fused(&c.d, c.layout, 0));
  dnnk_conv2d_forward_ex(&c.d, c.layout, t.x.data(), t.w.data(), t.bias.data(),
                         got.data(), ws.v.data(), ws.n);
  EXPECT_LE(max_rel_diff(got.data(), want.data(), got.size()),
            tol((long)c.d.c * c.d.kh * c.d.kw));
  EXPECT_TRUE(ws.intact());
}

TEST_P(FusedTest, BackwardDataMatchesDirect) {
  const FusedCase &c = GetParam();
  Data t(c);
  std::vector<float> want = t.ref.backward_data(t.dy, t.w);
  std::vector<float> got(want.size(), NAN);
  GuardedWs ws(dnnk_conv_workspace_fused(&c.d, c.layout, 0));
  dnnk_conv2d_backward_data_ex(&c.d, c.layout, t.dy.data(), t.w.data(),
                               got.data(), ws.v.data(), ws.n);
  EXPECT_LE(max_rel_diff(got.data(), want.data(), got.size()),
            tol((long)c.d.k * c.d.kh * c.d.kw));
  EXPECT_TRUE(ws.intact());
}

TEST_P(FusedTest, BackwardWeightsMatchesDirect) {
  const FusedCase &c = GetParam();
  Data t(c);
  std::vector<float> dbw;
  std::vector<float> want = t.ref.backward_weights(t.x, t.dy, dbw);
  std::vector<float> got(want.size(), NAN), dbg(c.d.k, NAN);
  GuardedWs ws(dnnk_conv_workspace_fused(&c.d, c.layout, 0));
  dnnk_conv2d_backward_weights_ex(&c.d, c.layout, t.x.data(), t.dy.data(),
                                  got.data(), dbg.data(), ws.v.data(), ws.n);
  long q = (long)c.d.n * t.ref.oh * t.ref.ow;
  EXPECT_LE(max_rel_diff(got.data(), want.data(), got.size()), tol(q));
  EXPECT_LE(max_rel_diff(dbg.data(), dbw.data(), dbg.size()), tol(q));
  EXPECT_TRUE(ws.intact());
}

TEST_P(FusedTest, SmallWorkspacesGiveSameResults) {
  // Workspaces from one thread's size down to almost nothing: the passes
  // use fewer threads (or allocate), never write past the end, and give
  // the same numbers.
  const FusedCase &c = GetParam();
  Data t(c);
  std::vector<float> y0(t.dy.size()), dx0(t.x.size()), dw0(t.w.size());
  dnnk_conv2d_forward_ex(&c.d, c.layout, t.x.data(), t.w.data(), nullptr,
                         y0.data(), nullptr, 0);
  dnnk_conv2d_backward_data_ex(&c.d, c.layout, t.dy.data(), t.w.data(),
                               dx0.data(), nullptr, 0);
  dnnk_conv2d_backward_weights_ex(&c.d, c.layout, t.x.data(), t.dy.data(),
                                  dw0.data(), nullptr, nullptr, 0);
  size_t n1 = dnnk_conv_workspace_fused(&c.d, c.layout, 1);
  long q = (long)c.d.n * t.ref.oh * t.ref.ow;
  for (size_t div : {1, 2, 3, 4, 6, 8, 1000000}) {
    GuardedWs ws(n1 / div);
    std::vector<float> y(y0.size()), dx(dx0.size()), dw(dw0.size());
    dnnk_conv2d_forward_ex(&c.d, c.layout, t.x.data(), t.w.data(), nullptr,
                           y.data(), ws.v.data(), ws.n);
    EXPECT_EQ(y, y0) << "workspace " << ws.n;
    dnnk_conv2d_backward_data_ex(&c.d, c.layout, t.dy.data(), t.w.data(),
                                 dx.data(), ws.v.data(), ws.n);
    EXPECT_EQ(dx, dx0) << "workspace " << ws.n;
    dnnk_conv2d_backward_weights_ex(&c.d, c.layout, t.x.data(), t.dy.data(),
                                    dw.data(), nullptr, ws.v.data(), ws.n);
    EXPECT_LE(max_rel_diff(dw.data(), dw0.data(), dw.size()), tol(q));
    EXPECT_TRUE(ws.intact()) << "workspace " << ws.n;
  }
}

// L = sum(conv(x, w) * r) through the fused forward.
double fused_loss(const FusedCase &c, const std::vector<float> &x,
                  const std::vector<float> &w, const std::vector<float> &r) {
  std::vector<float> y(r.size());
  dnnk_conv2d_forward_ex(&c.d, c.layout, x.data(), w.data(), nullptr, y.data(),
                         nullptr, 0);
  double s = 0.0;
  for (size_t i = 0; i < y.size(); ++i)
    s += (double)y[i] * r[i];
  return s;
}

TEST_P(FusedTest, GradientsMatchFiniteDifferences) {
  const FusedCase &c = GetParam();
  Data t(c);
  std::vector<float> dx(t.x.size()), dw(t.w.size());
  dnnk_conv2d_backward_data_ex(&c.d, c.layout, t.dy.data(), t.w.data(),
                               dx.data(), nullptr, 0);
  dnnk_conv2d_backward_weights_ex(&c.d, c.layout, t.x.data(), t.dy.data(),
                                  dw.data(), nullptr, nullptr, 0);
  std::mt19937 gen(7);
  const float eps = 1e-2f;
  auto probe = [&](std::vector<float> &v, size_t i) {
    float keep = v[i];
    v[i] = keep + eps;
    double up = fused_loss(c, t.x, t.w, t.dy);
    v[i] = keep - eps;
    double down = fused_loss(c, t.x, t.w, t.dy);
    v[i] = keep;
    return (up - down) / (2.0 * eps);
  };
  for (int k = 0; k < 10; ++k) {
    size_t i = gen() % t.x.size();
    double num = probe(t.x, i);
    EXPECT_NEAR(dx[i], num, 2e-3 * (1 + std::fabs(num))) << "dx[" << i << "]";
    size_t j = gen() % t.w.size();
    num = probe(t.w, j);
    EXPECT_NEAR(dw[j], num, 2e-3 * (1 + std::fabs(num))) << "dw[" << j << "]";
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, FusedTest, testing::ValuesIn(fused_cases()),
                         [](const testing::TestParamInfo<FusedCase> &info) {
                           return std::string(info.param.name) +
                                  (info.param.layout ? "_nhwc" : "_nchw");
                         });

// The benchmark's layers (LeNet, ResNet block, reference CNN).
std::vector<dnnk_conv_desc> bench_layers() {
  return {{64, 1, 28, 28, 6, 5, 5, 1, 1, 2, 2},
          {64, 6, 14, 14, 16, 5, 5, 1, 1, 0, 0},
          {32, 64, 16, 16, 64, 3, 3, 1, 1, 1, 1},
          {32, 32, 32, 32, 64, 3, 3, 2, 2, 1, 1},
          {32, 32, 32, 32, 64, 1, 1, 2, 2, 0, 0},
          {64, 1, 28, 28, 32, 5, 5, 1, 1, 2, 2},
          {64, 32, 14, 14, 64, 5, 5, 1, 1, 2, 2}};
}

TEST(Fused, WorkspaceAtMostATenthOfIm2col) {
  for (const dnnk_conv_desc &d : bench_layers())
    for (int layout : {DNNK_NCHW, DNNK_NHWC})
      for (int threads : {1, 2}) {
        size_t fused = dnnk_conv_workspace_fused(&d, layout, threads);
        EXPECT_LE(fused * 10, dnnk_conv_workspace(&d))
            << d.c << "->" << d.k << " " << d.h << "x" << d.w << " threads "
            << threads << " layout " << layout;
      }
}

TEST(Fused, LayoutsAgree) {
  // NHWC in, NHWC out equals the NCHW pass on transposed tensors.
  dnnk_conv_desc d = {3, 5, 9, 7, 6, 3, 3, 2, 1, 1, 1, 1, 1};
  int oh = dnnk_conv_out_h(&d), ow = dnnk_conv_out_w(&d);
  auto x = random_floats((size_t)d.n * d.c * d.h * d.w, 41);
  auto w = random_floats((size_t)d.k * d.c * d.kh * d.kw, 42);
  std::vector<float> xh(x.size()), y(d.n * d.k * oh * ow), yh(y.size());
  for (int b = 0; b < d.n; ++b)
    for (int c = 0; c < d.c; ++c)
      for (int i = 0; i < d.h; ++i)
        for (int j = 0; j < d.w; ++j)
          xh[at(DNNK_NHWC, b, c, i, j, d.c, d.h, d.w)] =
              x[at(DNNK_NCHW, b, c, i, j, d.c, d.h, d.w)];
  dnnk_conv2d_forward_ex(&d, DNNK_NCHW, x.data(), w.data(), nullptr, y.data(),
                         nullptr, 0);
  dnnk_conv2d_forward_ex(&d, DNNK_NHWC, xh.data(), w.data(), nullptr, yh.data(),
                         nullptr, 0);
  for (int b = 0; b < d.n; ++b)
    for (int k = 0; k < d.k; ++k)
      for (int i = 0; i < oh; ++i)
        for (int j = 0; j < ow; ++j)
          EXPECT_NEAR(yh[at(DNNK_NHWC, b, k, i, j, d.k, oh, ow)],
                      y[at(DNNK_NCHW, b, k, i, j, d.k, oh, ow)], 1e-5);
}

TEST(Fused, GoldenHashOnEveryThreadCount) {
  // The bits the AArch64 check must reproduce (exact sums, see the header).
  int keep = omp_get_max_threads();
  for (int t : {1, 2, 3}) {
    omp_set_num_threads(t);
    EXPECT_EQ(dnnk_conv_golden_hash(), DNNK_CONV_GOLDEN) << t << " threads";
  }
  omp_set_num_threads(keep);
}

// Caps the address space at what the process uses now plus extra bytes, so
// that a larger allocation fails (for death tests: the cap stays).
void cap_address_space(size_t extra) {
  long pages = 0;
  if (FILE *f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld", &pages) != 1)
      pages = 0;
    std::fclose(f);
  }
  rlimit r{};
  r.rlim_cur = r.rlim_max = (rlim_t)pages * sysconf(_SC_PAGESIZE) + extra;
  setrlimit(RLIMIT_AS, &r);
}

// A 512 x 4096 x 512 SGEMM on one thread with 1 MiB of address space to
// spare: its packing buffers need 4.7 MiB.
void sgemm_under_cap() {
  omp_set_num_threads(1); // no thread to start under the cap
  std::vector<float> a(512 * 512), b(512 * 4096), c(512 * 4096);
  cap_address_space(1 << 20);
  dnnk_sgemm(0, 0, 512, 4096, 512, 1.0f, a.data(), 512, b.data(), 4096, 0.0f,
             c.data(), 4096);
}

// A pass whose workspace cannot be allocated stops the program with the
// pass's name instead of returning without writing its output: a
// one-channel layer whose workspace is about 1 GiB, and a GEMM's packing
// buffers (4.7 MiB), each over the cap.
TEST(Fused, WorkspaceThatCannotBeAllocatedAbortsNamingThePass) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  float dummy[16] = {};
  const dnnk_conv_desc c1 = {1, 1, 2048, 2048, 64, 5, 5, 1, 1, 2, 2, 1, 1};
  EXPECT_DEATH(
      {
        cap_address_space(256 << 20);
        dnnk_conv2d_backward_data_ex(&c1, DNNK_NCHW, dummy, dummy, dummy,
                                     nullptr, 0);
      },
      "dnnk error: one-channel data gradient: workspace: cannot "
      "allocate [0-9]+ bytes");
  EXPECT_DEATH(
      sgemm_under_cap(),
      "dnnk error: sgemm: packing buffers: cannot allocate [0-9]+ bytes");
}

} // namespace
