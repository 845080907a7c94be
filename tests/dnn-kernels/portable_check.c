/* Serial self-check of dnnk built for another ISA (compiled without OpenMP,
 * so it runs under qemu user mode, which cannot start threads here): GEMM
 * and convolution against direct loops, and the golden augmentation hash
 * that every build (x86 AVX-512 host, baseline x86 device, AArch64 DPU)
 * must reproduce bit for bit, and the convGemm passes' golden hash (exact
 * sums: the same bits as the x86 build). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "augment_golden.h"
#include "conv_golden.h"
#include "dnnk.h"

/* Checks run and failed so far. */
static int passed, failed;

/* Records one check and prints failures. */
static void check(int ok, const char *what) {
  if (ok) {
    ++passed;
  } else {
    ++failed;
    printf("FAILED: %s\n", what);
  }
}

/* Deterministic pseudo-random floats in [-1, 1). */
static void fill(float *v, long n, unsigned seed) {
  for (long i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    v[i] = (float)(seed >> 8) / 8388608.0f - 1.0f;
  }
}

/* dnnk_sgemm against a double loop on one shape and transpose pair. */
static void gemm_case(int m, int n, int k, int ta, int tb) {
  float *a = malloc(sizeof(float) * m * k), *b = malloc(sizeof(float) * k * n);
  float *c = malloc(sizeof(float) * m * n);
  fill(a, (long)m * k, 1);
  fill(b, (long)k * n, 2);
  dnnk_sgemm(ta, tb, m, n, k, 1.0f, a, ta ? m : k, b, tb ? k : n, 0.0f, c, n);
  double worst = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int p = 0; p < k; ++p)
        s += (double)(ta ? a[p * m + i] : a[i * k + p]) *
             (tb ? b[j * k + p] : b[p * n + j]);
      double d = fabs(c[i * n + j] - s) / (1 + fabs(s));
      worst = d > worst ? d : worst;
    }
  char what[96];
  snprintf(what, sizeof what, "gemm %dx%dx%d ta=%d tb=%d", m, n, k, ta, tb);
  check(worst < 1e-5, what);
  free(a);
  free(b);
  free(c);
}

/* Convolution forward against direct loops. */
static void conv_case(void) {
  dnnk_conv_desc d = {2, 3, 9, 8, 5, 3, 3, 2, 2, 1, 1};
  int oh = dnnk_conv_out_h(&d), ow = dnnk_conv_out_w(&d);
  long nx = (long)d.n * d.c * d.h * d.w, nw = (long)d.k * d.c * 9;
  long ny = (long)d.n * d.k * oh * ow;
  float *x = malloc(sizeof(float) * nx), *w = malloc(sizeof(float) * nw);
  float *y = malloc(sizeof(float) * ny);
  fill(x, nx, 3);
  fill(w, nw, 4);
  dnnk_conv2d_forward(&d, x, w, NULL, y, NULL);
  double worst = 0;
  for (int b = 0; b < d.n; ++b)
    for (int k = 0; k < d.k; ++k)
      for (int oy = 0; oy < oh; ++oy)
        for (int ox = 0; ox < ow; ++ox) {
          double s = 0;
          for (int c = 0; c < d.c; ++c)
            for (int i = 0; i < 3; ++i)
              for (int j = 0; j < 3; ++j) {
                int yy = oy * 2 - 1 + i, xx = ox * 2 - 1 + j;
                if (yy >= 0 && yy < d.h && xx >= 0 && xx < d.w)
                  s += (double)x[((b * d.c + c) * d.h + yy) * d.w + xx] *
                       w[((k * d.c + c) * 3 + i) * 3 + j];
              }
          double g = y[((b * d.k + k) * oh + oy) * ow + ox];
          double e = fabs(g - s) / (1 + fabs(s));
          worst = e > worst ? e : worst;
        }
  check(worst < 1e-5, "conv forward");
  free(x);
  free(w);
  free(y);
}

int main(void) {
  const int shapes[][3] = {{1, 1, 1}, {13, 29, 17}, {50, 70, 300}, {9, 1, 5}};
  for (int s = 0; s < 4; ++s)
    for (int t = 0; t < 4; ++t)
      gemm_case(shapes[s][0], shapes[s][1], shapes[s][2], t & 1, t >> 1);
  conv_case();
  check(dnnk_augment_golden_hash() == DNNK_AUGMENT_GOLDEN,
        "augmentation golden hash");
  check(dnnk_augment_heavy_golden_hash() == DNNK_AUGMENT_HEAVY_GOLDEN,
        "heavy augmentation golden hash (warp, colour)");
  check(dnnk_conv_golden_hash() == DNNK_CONV_GOLDEN,
        "convGemm golden hash (both layouts, three passes)");
  check(dnnk_conv_golden_layout_hash(DNNK_NCHWC) == DNNK_CONV_GOLDEN_NCHW,
        "blocked (NCHWc) passes give the NCHW golden bits");
  printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}
