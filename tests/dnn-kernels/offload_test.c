/* The dnnk kernels inside `#pragma omp target` regions, checked against the
 * same calls on the host. Built with -fopenmp-targets=<triple> and run with
 * OMP_TARGET_OFFLOAD=mandatory: with LLVM's host plugin the regions run in
 * the plugin's device (a separate address space as far as the program
 * knows); with ompdpu's plugin they run on the (emulated) DPU. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Largest |a - b| / (1 + |b|). */
static double max_rel(const float *a, const float *b, long n) {
  double m = 0;
  for (long i = 0; i < n; ++i) {
    double d = fabs((double)a[i] - b[i]) / (1.0 + fabs((double)b[i]));
    m = d > m || d != d ? d : m;
  }
  return m;
}

/* The three passes' outputs, laid out y | dx | dw+db, device against host. */
static void check_passes(const float *dev, const float *host, long ny, long nx,
                         long nwb, const char *what) {
  char m[96];
  snprintf(m, sizeof m, "%s forward device == host", what);
  check(max_rel(dev, host, ny) < 1e-5, m);
  snprintf(m, sizeof m, "%s backward data device == host", what);
  check(max_rel(dev + ny, host + ny, nx) < 1e-5, m);
  snprintf(m, sizeof m, "%s backward weights device == host", what);
  check(max_rel(dev + ny + nx, host + ny + nx, nwb) < 1e-5, m);
}

/* GEMM inside a target region, against the host. */
static void test_gemm(void) {
  const int m = 70, n = 90, k = 130;
  float *a = malloc(sizeof(float) * m * k), *b = malloc(sizeof(float) * k * n);
  float *c_host = malloc(sizeof(float) * m * n);
  float *c_dev = malloc(sizeof(float) * m * n);
  fill(a, m * k, 1);
  fill(b, k * n, 2);
  dnnk_sgemm(DNNK_NO_TRANS, DNNK_TRANS, m, n, k, 1.0f, a, k, b, k, 0.0f, c_host,
             n);
  int on_device = 0, device_pid = 0;
  // clang-format off
#pragma omp target map(to: a[0:m * k], b[0:k * n]) \
                   map(from: c_dev[0:m * n], on_device, device_pid)
  // clang-format on
  {
    on_device = !omp_is_initial_device();
    device_pid = getpid();
    dnnk_sgemm(DNNK_NO_TRANS, DNNK_TRANS, m, n, k, 1.0f, a, k, b, k, 0.0f,
               c_dev, n);
  }
  check(on_device, "gemm region ran on a device");
  // Under ompdpu the region must have run in the server, not in this process.
  if (getenv("DNNK_EXPECT_REMOTE"))
    check(device_pid != getpid(), "gemm region ran in the DPU server process");
  check(max_rel(c_dev, c_host, m * n) < 1e-5, "gemm device == host");
  free(a);
  free(b);
  free(c_host);
  free(c_dev);
}

/* Convolution forward and both backward passes inside one target region. */
static void test_conv(void) {
  dnnk_conv_desc d = {4, 3, 9, 9, 5, 3, 3, 2, 2, 1, 1};
  int oh = dnnk_conv_out_h(&d), ow = dnnk_conv_out_w(&d);
  long nx = (long)d.n * d.c * d.h * d.w, nw = (long)d.k * d.c * d.kh * d.kw;
  long ny = (long)d.n * d.k * oh * ow, nws = (long)dnnk_conv_workspace(&d);
  float *x = malloc(sizeof(float) * nx), *w = malloc(sizeof(float) * nw);
  float *bias = malloc(sizeof(float) * d.k), *dy = malloc(sizeof(float) * ny);
  float *out_h = malloc(sizeof(float) * (ny + nx + nw + d.k));
  float *out_d = malloc(sizeof(float) * (ny + nx + nw + d.k));
  float *ws = malloc(sizeof(float) * nws);
  fill(x, nx, 3);
  fill(w, nw, 4);
  fill(bias, d.k, 5);
  fill(dy, ny, 6);
  long total = ny + nx + nw + d.k;
  dnnk_conv2d_forward(&d, x, w, bias, out_h, ws);
  dnnk_conv2d_backward_data(&d, dy, w, out_h + ny, ws);
  dnnk_conv2d_backward_weights(&d, x, dy, out_h + ny + nx, out_h + ny + nx + nw,
                               ws);
  /* The workspace lives only on the device: map(alloc). */
  // clang-format off
#pragma omp target map(to: d, x[0:nx], w[0:nw], bias[0:d.k], dy[0:ny]) \
                   map(alloc: ws[0:nws]) map(from: out_d[0:total])
  // clang-format on
  {
    dnnk_conv2d_forward(&d, x, w, bias, out_d, ws);
    dnnk_conv2d_backward_data(&d, dy, w, out_d + ny, ws);
    dnnk_conv2d_backward_weights(&d, x, dy, out_d + ny + nx,
                                 out_d + ny + nx + nw, ws);
  }
  check_passes(out_d, out_h, ny, nx, nw + d.k, "conv");
  free(x);
  free(w);
  free(bias);
  free(dy);
  free(out_h);
  free(out_d);
  free(ws);
}

/* The fused convolution passes (both layouts, stride, padding, dilation,
 * workspaces allocated on the device) give the golden bits there too. */
static void test_conv_golden(void) {
  uint64_t h = 0;
  // clang-format off
#pragma omp target map(from: h)
  // clang-format on
  h = dnnk_conv_golden_hash();
  check(h == DNNK_CONV_GOLDEN, "convGemm golden hash inside a target region");
}

/* The blocked passes inside a target region (the device's own block size,
 * converted there): the NCHW golden bits, and the NCHW passes' results on
 * a float-rounded shape within rounding. */
static void test_conv_blocked(void) {
  uint64_t h = 0;
  int block = 0;
  // clang-format off
#pragma omp target map(from: h, block)
  // clang-format on
  {
    h = dnnk_conv_golden_layout_hash(DNNK_NCHWC);
    block = dnnk_channel_block();
  }
  printf("device channel block %d, host %d\n", block, dnnk_channel_block());
  check(h == DNNK_CONV_GOLDEN_NCHW,
        "blocked golden hash (NCHW bits) inside a target region");
  dnnk_conv_desc d = {3, 19, 11, 10, 21, 3, 3, 2, 2, 1, 1};
  int oh = dnnk_conv_out_h(&d), ow = dnnk_conv_out_w(&d);
  long nx = (long)d.n * d.c * d.h * d.w, nw = (long)d.k * d.c * d.kh * d.kw;
  long ny = (long)d.n * d.k * oh * ow, total = ny + nx + nw + d.k;
  float *x = malloc(sizeof(float) * nx), *w = malloc(sizeof(float) * nw);
  float *bias = malloc(sizeof(float) * d.k), *dy = malloc(sizeof(float) * ny);
  float *out_h = malloc(sizeof(float) * total);
  float *out_d = malloc(sizeof(float) * total);
  fill(x, nx, 13);
  fill(w, nw, 14);
  fill(bias, d.k, 15);
  fill(dy, ny, 16);
  dnnk_conv2d_forward(&d, x, w, bias, out_h, NULL);
  dnnk_conv2d_backward_data(&d, dy, w, out_h + ny, NULL);
  dnnk_conv2d_backward_weights(&d, x, dy, out_h + ny + nx, out_h + ny + nx + nw,
                               NULL);
  // clang-format off
#pragma omp target map(to: d, x[0:nx], w[0:nw], bias[0:d.k], dy[0:ny]) \
                   map(from: out_d[0:total])
  // clang-format on
  {
    long bx = (long)dnnk_blocked_size(d.n, d.c, d.h, d.w);
    long by = (long)dnnk_blocked_size(d.n, d.k, oh, ow);
    float *xb = malloc(sizeof(float) * bx), *dxb = malloc(sizeof(float) * bx);
    float *yb = malloc(sizeof(float) * by), *dyb = malloc(sizeof(float) * by);
    dnnk_to_blocked(x, d.n, d.c, d.h, d.w, xb);
    dnnk_to_blocked(dy, d.n, d.k, oh, ow, dyb);
    dnnk_conv2d_forward_ex(&d, DNNK_NCHWC, xb, w, bias, yb, NULL, 0);
    dnnk_conv2d_backward_data_ex(&d, DNNK_NCHWC, dyb, w, dxb, NULL, 0);
    dnnk_conv2d_backward_weights_ex(&d, DNNK_NCHWC, xb, dyb, out_d + ny + nx,
                                    out_d + ny + nx + nw, NULL, 0);
    dnnk_from_blocked(yb, d.n, d.k, oh, ow, out_d);
    dnnk_from_blocked(dxb, d.n, d.c, d.h, d.w, out_d + ny);
    free(xb);
    free(dxb);
    free(yb);
    free(dyb);
  }
  check_passes(out_d, out_h, ny, nx, nw + d.k, "blocked");
  free(x);
  free(w);
  free(bias);
  free(dy);
  free(out_h);
  free(out_d);
}

/* Augmentation: the device must produce the host's bytes exactly, and the
 * golden hash every build of dnnk reproduces. */
static void test_augment(void) {
  const int n = GOLDEN_N, c = GOLDEN_C, h = GOLDEN_H, w = GOLDEN_W;
  long nin = (long)n * c * h * w;
  uint8_t *img = malloc(nin);
  float *out_h = malloc(sizeof(float) * nin),
        *out_d = malloc(sizeof(float) * nin);
  dnnk_augment_params p;
  dnnk_augment_golden_setup(img, &p);
  dnnk_augment_batch(&p, img, DNNK_NHWC, n, c, h, w, 64, out_h);
  // clang-format off
#pragma omp target map(to: p, img[0:nin]) map(from: out_d[0:nin])
  // clang-format on
  dnnk_augment_batch(&p, img, DNNK_NHWC, n, c, h, w, 64, out_d);
  check(memcmp(out_h, out_d, sizeof(float) * nin) == 0,
        "augmentation device bytes == host bytes");
  check(dnnk_fnv1a(out_d, sizeof(float) * nin) == DNNK_AUGMENT_GOLDEN,
        "augmentation device bytes == golden hash");
  uint64_t heavy = 0;
  // clang-format off
#pragma omp target map(from: heavy)
  // clang-format on
  heavy = dnnk_augment_heavy_golden_hash();
  check(heavy == DNNK_AUGMENT_HEAVY_GOLDEN,
        "heavy augmentation (warp, colour) device bytes == golden hash");
  free(img);
  free(out_h);
  free(out_d);
}

/* Halo exchange and Jacobi with data resident on the device across
 * regions: pack on the device, unpack on the device, sweep, compare. */
static void test_halo(void) {
  dnnk_tile t = {13, 17, 1};
  long size = dnnk_tile_size(&t), nb = dnnk_halo_count(&t, DNNK_NORTH, 1);
  float *g = malloc(sizeof(float) * size), *g2 = malloc(sizeof(float) * size);
  float *out_h = malloc(sizeof(float) * size),
        *out_d = malloc(sizeof(float) * size);
  float *buf = malloc(sizeof(float) * nb);
  fill(g, size, 7);
  memcpy(out_h, g, sizeof(float) * size);
  memcpy(out_d, g, sizeof(float) * size);
  memcpy(g2, g, sizeof(float) * size);
  /* Host: copy the south border into the north ghosts (periodic in y). */
  dnnk_halo_pack(&t, g, DNNK_SOUTH, 1, buf);
  dnnk_halo_unpack(&t, g, DNNK_NORTH, 1, buf);
  dnnk_jacobi_inner(&t, g, out_h);
  dnnk_jacobi_frame(&t, g, out_h);
  // clang-format off
#pragma omp target data map(to: t, g2[0:size]) map(alloc: buf[0:nb]) \
                        map(tofrom: out_d[0:size])
  // clang-format on
  {
#pragma omp target
    dnnk_jacobi_inner(&t, g2, out_d);
#pragma omp target
    {
      dnnk_halo_pack(&t, g2, DNNK_SOUTH, 1, buf);
      dnnk_halo_unpack(&t, g2, DNNK_NORTH, 1, buf);
    }
#pragma omp target
    dnnk_jacobi_frame(&t, g2, out_d);
  }
  check(memcmp(out_h, out_d, sizeof(float) * size) == 0,
        "halo + jacobi device == host");
  free(g);
  free(g2);
  free(out_h);
  free(out_d);
  free(buf);
}

int main(void) {
  printf("devices: %d\n", omp_get_num_devices());
  test_gemm();
  test_conv();
  test_conv_golden();
  test_conv_blocked();
  test_augment();
  test_halo();
  printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}
