// Layer shapes of the benchmark and their lowering to GEMM (as dnnk does it:
// P = n * oh * ow output positions, Q = c * kh * kw taps).
#include "layers.h"

namespace bench {

std::vector<Layer> bench_layers(bool quick) {
  int rb = quick ? 8 : 32; // ResNet batch
  // n, c, h, w, k, kh, kw, sh, sw, ph, pw
  return {
      {"LeNet conv1 1->6 5x5 p2 28x28 n64",
       "lenet1",
       {64, 1, 28, 28, 6, 5, 5, 1, 1, 2, 2}},
      {"LeNet conv2 6->16 5x5 14x14 n64",
       "lenet2",
       {64, 6, 14, 14, 16, 5, 5, 1, 1, 0, 0}},
      {"ResNet 3x3 64->64 16x16 n" + std::to_string(rb),
       "res3x3",
       {rb, 64, 16, 16, 64, 3, 3, 1, 1, 1, 1}},
      {"ResNet 3x3/2 32->64 32x32 n" + std::to_string(rb),
       "res3x3s2",
       {rb, 32, 32, 32, 64, 3, 3, 2, 2, 1, 1}},
      {"ResNet 1x1/2 32->64 32x32 n" + std::to_string(rb),
       "res1x1s2",
       {rb, 32, 32, 32, 64, 1, 1, 2, 2, 0, 0}},
      {"CNN conv1 1->32 5x5 p2 28x28 n64",
       "cnn1",
       {64, 1, 28, 28, 32, 5, 5, 1, 1, 2, 2}},
      {"CNN conv2 32->64 5x5 p2 14x14 n64",
       "cnn2",
       {64, 32, 14, 14, 64, 5, 5, 1, 1, 2, 2}},
  };
}

std::vector<GemmShape> gemm_shapes(bool quick) {
  std::vector<GemmShape> s;
  for (int n :
       quick ? std::vector<int>{512} : std::vector<int>{256, 512, 1024, 2048})
    s.push_back({"square " + std::to_string(n), n, n, n, false, false});
  for (const Layer &l : bench_layers(quick)) {
    const dnnk_conv_desc &d = l.d;
    int p = d.n * dnnk_conv_out_h(&d) * dnnk_conv_out_w(&d);
    int q = d.c * d.kh * d.kw;
    const std::string &base = l.tag;
    s.push_back({base + " fwd", d.k, p, q, false, false});
    s.push_back({base + " bwd-data", q, p, d.k, true, false});
    s.push_back({base + " bwd-wt", d.k, q, p, false, true});
  }
  return s;
}

} // namespace bench
