// GEMM section: dnnk against OpenBLAS and BLIS, square and convolution-shaped.
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include "bench_sections.h"
#include "blis_backend.h"
#include "layers.h"

namespace bench {

// Largest relative difference between two results (a sanity check: the
// benchmark refuses to report a fast wrong answer).
static double max_rel(const std::vector<float> &a,
                      const std::vector<float> &b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i)
    m = std::max(m, std::fabs((double)a[i] - b[i]) / (1 + std::fabs(b[i])));
  return m;
}

// Whether a benchmark shape is one of the square sizes.
static bool is_square(const GemmShape &g) {
  return g.name.rfind("square", 0) == 0;
}

// The square sizes again, warm and paired round by round (paired_rounds):
// the figure the square-SGEMM target is read from, steadier than the cold
// single calls of the table above.
void run_square_paired(const Options &opt, Report &report) {
  report.section(
      "Square SGEMM, paired warm rounds, GFLOP/s (median of rounds)", "size",
      {"dnnk", "OpenBLAS", "dnnk/OpenBLAS", "lowest round", "highest round"},
      {"%.1f", "%.1f", "%.3f", "%.3f", "%.3f"});
  std::mt19937 gen(2);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<int> below, sizes;
  for (const GemmShape &g : gemm_shapes(opt.quick)) {
    if (!is_square(g))
      continue;
    int n = g.m;
    std::vector<float> a((size_t)n * n), b(a.size()), c(a.size()),
        c_ref(a.size());
    for (auto &v : a)
      v = dist(gen);
    for (auto &v : b)
      v = dist(gen);
    auto dnnk = [&] {
      dnnk_sgemm(0, 0, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(),
                 n);
    };
    auto openblas = [&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f,
                  a.data(), n, b.data(), n, 0.0f, c_ref.data(), n);
    };
    // Each timed run lasts about 20 ms (3 calls at least): long enough for
    // the core to be back at full clock after settle().
    double one = median_seconds(dnnk, 3, 0.0);
    int calls = std::max(3, (int)std::ceil(0.02 / one));
    auto rounds = paired_rounds(dnnk, openblas, opt.quick ? 3 : 9, calls);
    std::vector<double> td, to, ratio;
    for (const auto &r : rounds) {
      td.push_back(r.first);
      to.push_back(r.second);
      ratio.push_back(r.second / r.first);
    }
    if (max_rel(c, c_ref) > 1e-3)
      std::fprintf(stderr, "warning: square %d: dnnk and OpenBLAS differ\n", n);
    double flops = 2.0 * n * n * (double)n;
    double med = median_of(ratio);
    report.add(std::to_string(n),
               {flops / median_of(td) * 1e-9, flops / median_of(to) * 1e-9, med,
                *std::min_element(ratio.begin(), ratio.end()),
                *std::max_element(ratio.begin(), ratio.end())});
    sizes.push_back(n);
    if (med < 1.0)
      below.push_back(n);
  }
  std::printf("\nSquare SGEMM target (dnnk/OpenBLAS at least 1.0, paired): ");
  std::printf(below.empty() ? "met at every size run:" : "missed at");
  for (int n : below.empty() ? sizes : below)
    std::printf(" %d", n);
  std::printf("\n");
}

GemmSummary run_gemm(const Options &opt, Report &report) {
  report.section("SGEMM, GFLOP/s (median)", "shape (m x n x k, op)",
                 {"dnnk", "OpenBLAS", "BLIS", "dnnk/OpenBLAS", "dnnk/BLIS"},
                 {"%.1f", "%.1f", "%.1f", "%.2f", "%.2f"});
  GemmSummary sum;
  double log_ratio = 0;
  int conv_cases = 0;
  std::mt19937 gen(1);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (const GemmShape &g : gemm_shapes(opt.quick)) {
    std::vector<float> a((size_t)g.m * g.k), b((size_t)g.k * g.n);
    std::vector<float> c((size_t)g.m * g.n), c_ref(c.size()), c_blis(c.size());
    for (auto &v : a)
      v = dist(gen);
    for (auto &v : b)
      v = dist(gen);
    int lda = g.ta ? g.m : g.k, ldb = g.tb ? g.k : g.n;
    double flops = 2.0 * g.m * g.n * g.k;
    int reps = opt.quick ? 3 : 11;
    double min_s = opt.quick ? 0.0 : 0.2;
    std::vector<std::function<void()>> runs = {
        [&] {
          dnnk_sgemm(g.ta, g.tb, g.m, g.n, g.k, 1.0f, a.data(), lda, b.data(),
                     ldb, 0.0f, c.data(), g.n);
        },
        [&] {
          cblas_sgemm(CblasRowMajor, g.ta ? CblasTrans : CblasNoTrans,
                      g.tb ? CblasTrans : CblasNoTrans, g.m, g.n, g.k, 1.0f,
                      a.data(), lda, b.data(), ldb, 0.0f, c_ref.data(), g.n);
        }};
    if (blis_available())
      runs.push_back([&] {
        blis_sgemm(g.ta, g.tb, g.m, g.n, g.k, a.data(), lda, b.data(), ldb,
                   c_blis.data(), g.n);
      });
    std::vector<double> t = median_interleaved(runs, reps, min_s);
    if (max_rel(c, c_ref) > 1e-3)
      std::fprintf(stderr, "warning: %s: dnnk and OpenBLAS differ\n",
                   g.name.c_str());
    if (blis_available() && max_rel(c_blis, c_ref) > 1e-3)
      std::fprintf(stderr, "warning: %s: BLIS and OpenBLAS differ\n",
                   g.name.c_str());
    double t_dnnk = t[0], t_ob = t[1], t_blis = t.size() > 2 ? t[2] : NAN;
    char name[160];
    std::snprintf(name, sizeof name, "%s %dx%dx%d %s%s", g.name.c_str(), g.m,
                  g.n, g.k, g.ta ? "T" : "N", g.tb ? "T" : "N");
    double gd = flops / t_dnnk * 1e-9, go = flops / t_ob * 1e-9;
    double gb = flops / t_blis * 1e-9;
    report.add(name, {gd, go, gb, gd / go, gd / gb});
    if (!is_square(g)) {
      log_ratio += std::log(gd / go);
      ++conv_cases;
      sum.min_conv_ratio = std::min(sum.min_conv_ratio, gd / go);
    }
  }
  sum.geomean_conv_ratio = conv_cases ? std::exp(log_ratio / conv_cases) : 0;
  std::printf("\nConvolution-shaped GEMMs: dnnk/OpenBLAS geometric mean %.2f, "
              "minimum %.2f\n",
              sum.geomean_conv_ratio, sum.min_conv_ratio);
  return sum;
}

} // namespace bench
