// Convolution section: dnnk's three passes against oneDNN on the same shapes.
#include <cstdio>
#include <random>
#include <vector>

#include "bench_sections.h"
#include "layers.h"
#include "onednn_conv.h"

namespace bench {

// Times one pass: dnnk on NCHW, NHWC and its blocked layout (NCHWc, tensors
// converted beforehand as oneDNN's are; KCRS weights reordered inside the
// pass), oneDNN on plain layouts and on blocked ones, in alternation.
// Ratios: oneDNN nchw against dnnk NCHW (same layouts), oneDNN blocked
// against dnnk's faster plain layout and against dnnk blocked; workspaces in
// KiB.
static void time_pass(Report &report, const std::string &name, int reps,
                      double min_s, const std::function<void()> &dnnk,
                      const std::function<void()> &dnnk_nhwc,
                      const std::function<void()> &dnnk_blk,
                      const std::function<void()> &plain,
                      const std::function<void()> &blocked, double ws_im2col,
                      double ws_fused) {
  std::vector<double> t = median_interleaved(
      {dnnk, dnnk_nhwc, dnnk_blk, plain, blocked}, reps, min_s);
  double td = t[0], tn = t[1], tk = t[2], tp = t[3], tb = t[4];
  double best = td < tn ? td : tn;
  report.add(name, {td * 1e3, tn * 1e3, tk * 1e3, tp * 1e3, tb * 1e3, tp / td,
                    tp / tk, tb / best, tb / tk, ws_im2col, ws_fused});
}

void run_conv(const Options &opt, Report &report) {
  report.section(
      "Convolution, ms per pass (median); ratios are oneDNN time / dnnk time "
      "(vs blocked: dnnk's faster plain layout; blk: dnnk blocked); "
      "workspace KiB",
      "layer, pass",
      {"dnnk nchw", "dnnk nhwc", "dnnk blocked", "oneDNN nchw",
       "oneDNN blocked", "vs nchw", "blk vs nchw", "vs blocked",
       "blk vs blocked", "ws im2col", "ws convGemm"},
      {"%.3f", "%.3f", "%.3f", "%.3f", "%.3f", "%.2f", "%.2f", "%.2f", "%.2f",
       "%.0f", "%.0f"});
  std::vector<std::string> impls;
  std::mt19937 gen(2);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (const Layer &l : bench_layers(opt.quick)) {
    if (!opt.layers.empty() &&
        ("," + opt.layers + ",").find("," + l.tag + ",") == std::string::npos)
      continue;
    const dnnk_conv_desc &d = l.d;
    int oh = dnnk_conv_out_h(&d), ow = dnnk_conv_out_w(&d);
    std::vector<float> x((size_t)d.n * d.c * d.h * d.w);
    std::vector<float> w((size_t)d.k * d.c * d.kh * d.kw), b(d.k), db(d.k);
    std::vector<float> y((size_t)d.n * d.k * oh * ow), dy(y.size());
    std::vector<float> dx(x.size()), dw(w.size());
    // The fused passes' own workspace for this run's threads, per layout.
    size_t nws = dnnk_conv_workspace_fused(&d, DNNK_NCHW, opt.threads);
    size_t nws_h = dnnk_conv_workspace_fused(&d, DNNK_NHWC, opt.threads);
    size_t nws_b = dnnk_conv_workspace_fused(&d, DNNK_NCHWC, opt.threads);
    std::vector<float> ws(nws), ws_h(nws_h), ws_b(nws_b);
    // Blocked copies of the activations (converted once, outside the timing).
    std::vector<float> xb(dnnk_blocked_size(d.n, d.c, d.h, d.w)),
        dxb(xb.size());
    std::vector<float> yb(dnnk_blocked_size(d.n, d.k, oh, ow)), dyb(yb.size());
    double kib_im2col = dnnk_conv_workspace(&d) * 4.0 / 1024;
    double kib_fused = nws * 4.0 / 1024;
    for (auto *v : {&x, &w, &b, &dy})
      for (auto &e : *v)
        e = dist(gen);
    dnnk_to_blocked(x.data(), d.n, d.c, d.h, d.w, xb.data());
    dnnk_to_blocked(dy.data(), d.n, d.k, oh, ow, dyb.data());
    OnednnConv plain(d, false), blocked(d, true);
    impls.push_back(l.tag + ": nchw " + plain.impl() + "; blocked " +
                    blocked.impl());
    int reps = opt.quick ? 3 : 11;
    double min_s = opt.quick ? 0.0 : 0.1;
    time_pass(
        report, l.name + ", fwd", reps, min_s,
        [&] {
          dnnk_conv2d_forward_ex(&d, DNNK_NCHW, x.data(), w.data(), b.data(),
                                 y.data(), ws.data(), nws);
        },
        [&] {
          dnnk_conv2d_forward_ex(&d, DNNK_NHWC, x.data(), w.data(), b.data(),
                                 y.data(), ws_h.data(), nws_h);
        },
        [&] {
          dnnk_conv2d_forward_ex(&d, DNNK_NCHWC, xb.data(), w.data(), b.data(),
                                 yb.data(), ws_b.data(), nws_b);
        },
        [&] { plain.forward(); }, [&] { blocked.forward(); }, kib_im2col,
        kib_fused);
    time_pass(
        report, l.name + ", bwd-data", reps, min_s,
        [&] {
          dnnk_conv2d_backward_data_ex(&d, DNNK_NCHW, dy.data(), w.data(),
                                       dx.data(), ws.data(), nws);
        },
        [&] {
          dnnk_conv2d_backward_data_ex(&d, DNNK_NHWC, dy.data(), w.data(),
                                       dx.data(), ws_h.data(), nws_h);
        },
        [&] {
          dnnk_conv2d_backward_data_ex(&d, DNNK_NCHWC, dyb.data(), w.data(),
                                       dxb.data(), ws_b.data(), nws_b);
        },
        [&] { plain.backward_data(); }, [&] { blocked.backward_data(); },
        kib_im2col, kib_fused);
    time_pass(
        report, l.name + ", bwd-wt", reps, min_s,
        [&] {
          dnnk_conv2d_backward_weights_ex(&d, DNNK_NCHW, x.data(), dy.data(),
                                          dw.data(), db.data(), ws.data(), nws);
        },
        [&] {
          dnnk_conv2d_backward_weights_ex(&d, DNNK_NHWC, x.data(), dy.data(),
                                          dw.data(), db.data(), ws_h.data(),
                                          nws_h);
        },
        [&] {
          dnnk_conv2d_backward_weights_ex(&d, DNNK_NCHWC, xb.data(), dyb.data(),
                                          dw.data(), db.data(), ws_b.data(),
                                          nws_b);
        },
        [&] { plain.backward_weights(); }, [&] { blocked.backward_weights(); },
        kib_im2col, kib_fused);
  }
  std::printf("\noneDNN implementations (fwd / bwd-data / bwd-wt):\n");
  for (const auto &s : impls)
    std::printf("- %s\n", s.c_str());
}

} // namespace bench
