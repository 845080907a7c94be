// Augmentation section: images/s and GB/s against memcpy of the same bytes.
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "bench_sections.h"

namespace bench {

// One augmentation workload.
struct AugCase {
  const char *name;
  int n, c, h, w, pad, out_h, out_w, layout;
};

// memcpy split into one contiguous chunk per thread: the copy bandwidth of
// the same cores the augmentation runs on.
static void parallel_memcpy(void *dst, const void *src, size_t bytes) {
#pragma omp parallel
  {
    int t = omp_get_thread_num(), nt = omp_get_num_threads();
    size_t chunk = (bytes / nt + 63) & ~(size_t)63;
    size_t lo = std::min(bytes, chunk * t), hi = std::min(bytes, lo + chunk);
    std::memcpy((char *)dst + lo, (const char *)src + lo, hi - lo);
  }
}

void run_augment(const Options &opt, Report &report) {
  report.section("Augmentation (crop+pad, flip, brightness, contrast, "
                 "normalise; uint8 -> float NCHW)",
                 "batch", {"images/s", "GB/s", "memcpy GB/s", "dnnk/memcpy"},
                 {"%.0f", "%.2f", "%.2f", "%.2f"});
  const AugCase cases[] = {
      {"CIFAR 256x3x32x32 NHWC, pad 4", 256, 3, 32, 32, 4, 32, 32, DNNK_NHWC},
      {"CIFAR 256x3x32x32 NCHW, pad 4", 256, 3, 32, 32, 4, 32, 32, DNNK_NCHW},
      {"ImageNet 32x3x256x256 NHWC, crop 224", opt.quick ? 8 : 32, 3, 256, 256,
       0, 224, 224, DNNK_NHWC},
  };
  for (const AugCase &c : cases) {
    size_t in_bytes = (size_t)c.n * c.c * c.h * c.w;
    size_t out_floats = (size_t)c.n * c.c * c.out_h * c.out_w;
    std::vector<uint8_t> in(in_bytes);
    std::mt19937 gen(3);
    for (auto &v : in)
      v = (uint8_t)gen();
    std::vector<float> out(out_floats), copy_src(out_floats, 1.0f);
    dnnk_augment_params p;
    dnnk_augment_defaults(&p, c.h, c.w);
    p.seed = 7;
    p.pad = c.pad;
    p.out_h = c.out_h;
    p.out_w = c.out_w;
    p.flip = 1;
    p.brightness = 0.2f;
    p.contrast = 0.2f;
    for (int i = 0; i < 3; ++i) {
      p.mean[i] = 0.45f;
      p.std[i] = 0.25f;
    }
    int reps = opt.quick ? 3 : 21;
    double min_s = opt.quick ? 0.0 : 0.1;
    uint32_t epoch = 0;
    // memcpy moves the output bytes once (read + write): the floor of any
    // pass that produces them.
    std::vector<double> times = median_interleaved(
        {[&] {
           p.epoch = epoch++; // a new epoch each run, as in training
           dnnk_augment_batch(&p, in.data(), c.layout, c.n, c.c, c.h, c.w, 0,
                              out.data());
         },
         [&] {
           parallel_memcpy(out.data(), copy_src.data(),
                           out_floats * sizeof(float));
         }},
        reps, min_s);
    double t = times[0], tm = times[1];
    double bytes = (double)in_bytes + out_floats * sizeof(float);
    double mbytes = 2.0 * out_floats * sizeof(float);
    report.add(c.name, {c.n / t, bytes / t * 1e-9, mbytes / tm * 1e-9,
                        (bytes / t) / (mbytes / tm)});
  }
  std::printf("\nGB/s counts uint8 bytes read plus float bytes written; "
              "memcpy GB/s counts bytes read plus written by a copy of the "
              "float output, split over the same threads.\n");
}

} // namespace bench
