// Convolution section: dnnk's three passes against oneDNN on the same shapes.
#include <cstdio>
#include <random>
#include <vector>

#include "bench_sections.h"
#include "layers.h"
#include "onednn_conv.h"

namespace bench {

// Times one pass: dnnk, oneDNN on plain layouts and on blocked ones, in
// alternation.
static void time_pass(Report &report, const std::string &name, int reps,
                      double min_s, const std::function<void()> &dnnk,
                      const std::function<void()> &plain,
                      const std::function<void()> &blocked) {
  std::vector<double> t =
      median_interleaved({dnnk, plain, blocked}, reps, min_s);
  double td = t[0], tp = t[1], tb = t[2];
  report.add(name, {td * 1e3, tp * 1e3, tb * 1e3, tp / td, tb / td});
}

void run_conv(const Options &opt, Report &report) {
  report.section(
      "Convolution, ms per pass (median); ratios are oneDNN time / dnnk time",
      "layer, pass",
      {"dnnk", "oneDNN nchw", "oneDNN blocked", "vs nchw", "vs blocked"},
      {"%.3f", "%.3f", "%.3f", "%.2f", "%.2f"});
  std::vector<std::string> impls;
  std::mt19937 gen(2);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (const Layer &l : bench_layers(opt.quick)) {
    const dnnk_conv_desc &d = l.d;
    int oh = dnnk_conv_out_h(&d), ow = dnnk_conv_out_w(&d);
    std::vector<float> x((size_t)d.n * d.c * d.h * d.w);
    std::vector<float> w((size_t)d.k * d.c * d.kh * d.kw), b(d.k), db(d.k);
    std::vector<float> y((size_t)d.n * d.k * oh * ow), dy(y.size());
    std::vector<float> dx(x.size()), dw(w.size());
    std::vector<float> ws(dnnk_conv_workspace(&d));
    for (auto *v : {&x, &w, &b, &dy})
      for (auto &e : *v)
        e = dist(gen);
    OnednnConv plain(d, false), blocked(d, true);
    impls.push_back(l.tag + ": nchw " + plain.impl() + "; blocked " +
                    blocked.impl());
    int reps = opt.quick ? 3 : 11;
    double min_s = opt.quick ? 0.0 : 0.1;
    time_pass(
        report, l.name + ", fwd", reps, min_s,
        [&] {
          dnnk_conv2d_forward(&d, x.data(), w.data(), b.data(), y.data(),
                              ws.data());
        },
        [&] { plain.forward(); }, [&] { blocked.forward(); });
    time_pass(
        report, l.name + ", bwd-data", reps, min_s,
        [&] {
          dnnk_conv2d_backward_data(&d, dy.data(), w.data(), dx.data(),
                                    ws.data());
        },
        [&] { plain.backward_data(); }, [&] { blocked.backward_data(); });
    time_pass(
        report, l.name + ", bwd-wt", reps, min_s,
        [&] {
          dnnk_conv2d_backward_weights(&d, x.data(), dy.data(), dw.data(),
                                       db.data(), ws.data());
        },
        [&] { plain.backward_weights(); }, [&] { blocked.backward_weights(); });
  }
  std::printf("\noneDNN implementations (fwd / bwd-data / bwd-wt):\n");
  for (const auto &s : impls)
    std::printf("- %s\n", s.c_str());
}

} // namespace bench
