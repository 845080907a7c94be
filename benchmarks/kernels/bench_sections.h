// The sections of dnnk-bench, each printing one Markdown table.
#ifndef DNNK_BENCH_SECTIONS_H
#define DNNK_BENCH_SECTIONS_H

#include "bench_util.h"
#include "dnnk.h"

namespace bench {

// What the GEMM section concludes, for the closing summary.
struct GemmSummary {
  double geomean_conv_ratio = 0; // dnnk / OpenBLAS over convolution shapes
  double min_conv_ratio = 1e30;  // worst convolution shape
};

// dnnk_sgemm against OpenBLAS and BLIS.
GemmSummary run_gemm(const Options &opt, Report &report);
// Square dnnk_sgemm against OpenBLAS, warm and paired round by round.
void run_square_paired(const Options &opt, Report &report);
// Convolution passes against oneDNN.
void run_conv(const Options &opt, Report &report);
// Augmentation throughput against memcpy.
void run_augment(const Options &opt, Report &report);

} // namespace bench

#endif // DNNK_BENCH_SECTIONS_H
