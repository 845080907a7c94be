// dnnk_sgemm against a naive double-precision loop and against OpenBLAS, on
// shapes that exercise every edge of the blocking (partial MR/NR tiles,
// several KC panels, MC blocks, NC panels) and every transpose.
#include <cblas.h>
#include <gtest/gtest.h>

#include <omp.h>

#include <cmath>
#include <limits>
#include <tuple>

#include "dnnk.h"
#include "reference.h"

namespace {

// One GEMM problem: shape, transposes, scalars and padding of the ld's.
struct GemmCase {
  int m, n, k;
  int ta, tb;
  float alpha, beta;
  int pad; // extra elements per row of every operand
};

// Readable name for a parameterised case.
std::string case_name(const testing::TestParamInfo<GemmCase> &info) {
  const GemmCase &c = info.param;
  std::string s = std::to_string(c.m) + "x" + std::to_string(c.n) + "x" +
                  std::to_string(c.k) + (c.ta ? "_At" : "_A") +
                  (c.tb ? "_Bt" : "_B") + "_" + std::to_string(info.index);
  return s;
}

// Operands of a case, with padded leading dimensions.
struct Operands {
  int lda, ldb, ldc;
  std::vector<float> a, b, c;
  explicit Operands(const GemmCase &g) {
    int arows = g.ta ? g.k : g.m, acols = g.ta ? g.m : g.k;
    int brows = g.tb ? g.n : g.k, bcols = g.tb ? g.k : g.n;
    lda = acols + g.pad;
    ldb = bcols + g.pad;
    ldc = g.n + g.pad;
    a = random_floats((size_t)arows * lda, 1);
    b = random_floats((size_t)brows * ldb, 2);
    c = random_floats((size_t)g.m * ldc, 3);
  }
};

class GemmTest : public testing::TestWithParam<GemmCase> {};

// Tolerance for a sum of k products of numbers in [-1, 1].
double tolerance(int k) { return 2e-6 * std::sqrt((double)k) + 1e-6; }

TEST_P(GemmTest, MatchesNaiveLoop) {
  const GemmCase g = GetParam();
  Operands op(g);
  std::vector<float> want = op.c, got = op.c;
  ref::gemm(g.ta, g.tb, g.m, g.n, g.k, g.alpha, op.a.data(), op.lda,
            op.b.data(), op.ldb, g.beta, want.data(), op.ldc);
  dnnk_sgemm(g.ta, g.tb, g.m, g.n, g.k, g.alpha, op.a.data(), op.lda,
             op.b.data(), op.ldb, g.beta, got.data(), op.ldc);
  EXPECT_LE(max_rel_diff(got.data(), want.data(), got.size()), tolerance(g.k));
}

TEST_P(GemmTest, MatchesOpenBLAS) {
  const GemmCase g = GetParam();
  Operands op(g);
  std::vector<float> want = op.c, got = op.c;
  cblas_sgemm(CblasRowMajor, g.ta ? CblasTrans : CblasNoTrans,
              g.tb ? CblasTrans : CblasNoTrans, g.m, g.n, g.k, g.alpha,
              op.a.data(), op.lda, op.b.data(), op.ldb, g.beta, want.data(),
              op.ldc);
  dnnk_sgemm(g.ta, g.tb, g.m, g.n, g.k, g.alpha, op.a.data(), op.lda,
             op.b.data(), op.ldb, g.beta, got.data(), op.ldc);
  EXPECT_LE(max_rel_diff(got.data(), want.data(), got.size()),
            2 * tolerance(g.k));
}

// With one thread the blocked loops run without a team; with three, shares
// of tiles (and groups of narrow-edge tiles) split unevenly.
TEST_P(GemmTest, SameWithOneAndThreeThreads) {
  const GemmCase g = GetParam();
  Operands op(g);
  std::vector<float> want = op.c;
  ref::gemm(g.ta, g.tb, g.m, g.n, g.k, g.alpha, op.a.data(), op.lda,
            op.b.data(), op.ldb, g.beta, want.data(), op.ldc);
  int keep = omp_get_max_threads();
  for (int t : {1, 3}) {
    std::vector<float> got = op.c;
    omp_set_num_threads(t);
    dnnk_sgemm(g.ta, g.tb, g.m, g.n, g.k, g.alpha, op.a.data(), op.lda,
               op.b.data(), op.ldb, g.beta, got.data(), op.ldc);
    EXPECT_LE(max_rel_diff(got.data(), want.data(), got.size()), tolerance(g.k))
        << t << " threads";
  }
  omp_set_num_threads(keep);
}

// Shapes: tiny, odd, tile-edge, and larger than every cache block.
std::vector<GemmCase> gemm_cases() {
  std::vector<GemmCase> cases;
  const int shapes[][3] = {{1, 1, 1},     {3, 5, 7},      {13, 33, 17},
                           {12, 32, 256}, {25, 65, 257},  {64, 96, 600},
                           {290, 70, 40}, {7, 4200, 9},   {300, 300, 300},
                           {6, 50, 25},   {100, 1, 1000}, {1, 100, 1000},
                           {45, 100, 77}};
  for (const auto &s : shapes)
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb)
        cases.push_back({s[0], s[1], s[2], ta, tb, 1.0f, 0.0f, 0});
  cases.push_back({37, 41, 43, 0, 0, 0.5f, 1.0f, 3});
  cases.push_back({37, 41, 43, 1, 1, -2.0f, 0.25f, 5});
  cases.push_back({129, 257, 65, 0, 1, 1.0f, 1.0f, 1});
  cases.push_back({129, 257, 65, 1, 0, 1.5f, -1.0f, 7});
  // A last column sliver one vector wide: the narrow kernel over groups of
  // row slivers, partial rows inside a group, and every store mode.
  cases.push_back({45, 100, 77, 0, 0, 0.5f, -0.75f, 2});
  cases.push_back({45, 100, 77, 1, 1, 1.0f, 1.0f, 3});
  cases.push_back({200, 60, 300, 0, 1, -1.0f, 0.0f, 1});
  // Many rows: threads take row blocks over shared, double-buffered B
  // panels (several depth slices, a general beta, two NC panels).
  cases.push_back({300, 70, 600, 0, 0, -1.5f, 0.5f, 3});
  cases.push_back({300, 70, 600, 1, 1, 1.0f, 1.0f, 0});
  cases.push_back({264, 6150, 20, 0, 1, 1.0f, 0.25f, 1});
  // Few tiles, long k: the split-k path (partial sums per thread).
  cases.push_back({20, 30, 3000, 0, 1, 1.0f, 0.5f, 2});
  cases.push_back({7, 9, 5000, 1, 0, -1.0f, 0.0f, 0});
  cases.push_back({9, 50, 2100, 1, 1, 2.0f, 1.0f, 1});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Shapes, GemmTest, testing::ValuesIn(gemm_cases()),
                         case_name);

// Shapes with many rows, on 2 and 3 threads: each thread its own columns
// (wide C, shares cut at whole vectors, a partial last sliver) or row blocks
// over shared B panels (narrow C). Every element's sums are the one-thread
// GEMM's, so the results are the same bits.
TEST(Gemm, ManyRowsGiveTheSameBitsOnAnyThreadCount) {
  const GemmCase cases[] = {{400, 1100, 300, 0, 0, 1.0f, 0.0f, 0},
                            {400, 200, 300, 1, 1, -1.5f, 0.5f, 3},
                            {520, 150, 700, 0, 1, 1.0f, 1.0f, 1},
                            {384, 2050, 1100, 1, 0, 0.5f, 0.0f, 2}};
  int keep = omp_get_max_threads();
  for (const GemmCase &g : cases) {
    Operands op(g);
    std::vector<float> one;
    for (int t : {1, 2, 3}) {
      std::vector<float> got = op.c;
      omp_set_num_threads(t);
      dnnk_sgemm(g.ta, g.tb, g.m, g.n, g.k, g.alpha, op.a.data(), op.lda,
                 op.b.data(), op.ldb, g.beta, got.data(), op.ldc);
      if (t == 1)
        one = got;
      else
        EXPECT_EQ(got, one)
            << g.m << "x" << g.n << "x" << g.k << ", " << t << " threads";
    }
  }
  omp_set_num_threads(keep);
}

TEST(Gemm, BetaZeroIgnoresNaNInC) {
  // BLAS semantics: with beta == 0 the old C is never read.
  int m = 20, n = 40, k = 30;
  auto a = random_floats(m * k, 4), b = random_floats(k * n, 5);
  std::vector<float> c(m * n, std::numeric_limits<float>::quiet_NaN());
  std::vector<float> want(m * n);
  ref::gemm(0, 0, m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, want.data(),
            n);
  dnnk_sgemm(0, 0, m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, c.data(), n);
  EXPECT_LE(max_rel_diff(c.data(), want.data(), c.size()), tolerance(k));
}

TEST(Gemm, DegenerateSizes) {
  // k == 0 and alpha == 0 reduce to C = beta C; m or n == 0 touch nothing.
  std::vector<float> c = {1, 2, 3, 4}, a = {1, 1}, b = {1, 1};
  dnnk_sgemm(0, 0, 2, 2, 0, 1.0f, a.data(), 1, b.data(), 2, 0.5f, c.data(), 2);
  EXPECT_EQ(c, (std::vector<float>{0.5f, 1, 1.5f, 2}));
  dnnk_sgemm(0, 0, 2, 2, 1, 0.0f, a.data(), 1, b.data(), 2, 0.0f, c.data(), 2);
  EXPECT_EQ(c, (std::vector<float>{0, 0, 0, 0}));
  c = {7, 7, 7, 7};
  dnnk_sgemm(0, 0, 0, 2, 1, 1.0f, a.data(), 1, b.data(), 2, 0.0f, c.data(), 2);
  EXPECT_EQ(c, (std::vector<float>{7, 7, 7, 7}));
}

TEST(Gemm, SubmatrixLeavesNeighboursAlone) {
  // A C block inside a larger array: writes must stay inside m x n.
  int m = 13, n = 35, k = 9, ldc = 50;
  auto a = random_floats(m * k, 6), b = random_floats(k * n, 7);
  std::vector<float> c((m + 1) * ldc, 42.0f);
  dnnk_sgemm(0, 0, m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, c.data(),
             ldc);
  for (int i = 0; i <= m; ++i)
    for (int j = 0; j < ldc; ++j)
      if (i == m || j >= n)
        ASSERT_EQ(c[i * ldc + j], 42.0f) << i << "," << j;
}

TEST(GemmDeathTest, ArgumentsOutOfRangeNameThemselves) {
  float a[16] = {0}, b[16] = {0}, c[16] = {0};
  EXPECT_DEATH(dnnk_sgemm(0, 0, -1, 2, 2, 1, a, 2, b, 2, 0, c, 2),
               "dnnk error: dnnk_sgemm: m, n or k is negative");
  EXPECT_DEATH(dnnk_sgemm(7, 0, 2, 2, 2, 1, a, 2, b, 2, 0, c, 2),
               "dnnk_sgemm: trans_a is neither");
  EXPECT_DEATH(dnnk_sgemm(0, 0, 2, 2, 3, 1, a, 2, b, 2, 0, c, 2),
               "dnnk_sgemm: lda is below");
  EXPECT_DEATH(dnnk_sgemm(0, 1, 2, 2, 3, 1, a, 3, b, 2, 0, c, 2),
               "dnnk_sgemm: ldb is below");
  EXPECT_DEATH(dnnk_sgemm(0, 0, 2, 2, 2, 1, a, 2, b, 2, 0, c, 1),
               "dnnk_sgemm: ldc is below n");
}

} // namespace
