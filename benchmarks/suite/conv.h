/* Workload 3, convolution layer offload: the layer shapes, their inputs and
 * the step every way performs (forward, backward data, backward weights of
 * one layer; then the host applies SGD to the weights, so every step sees
 * new weights and the checksum covers the whole chain). */
#ifndef SUITE_CONV_H
#define SUITE_CONV_H

#include "common.h"

/* The layers: a ResNet-style 3x3 (64 -> 64 channels, pad 1) and a 1x1
 * bottleneck reduction (256 -> 64), both on 16x16 feature maps. */
static inline dnnk_conv_desc conv_layer(const char *name, int batch) {
  dnnk_conv_desc d3 = {batch, 64, 16, 16, 64, 3, 3, 1, 1, 1, 1};
  dnnk_conv_desc d1 = {batch, 256, 16, 16, 64, 1, 1, 1, 1, 0, 0};
  if (strcmp(name, "3x3") == 0)
    return d3;
  if (strcmp(name, "1x1") == 0)
    return d1;
  suite_die("unknown layer '%s' (3x3 or 1x1)", name);
  return d3;
}

/* Element counts of a layer's arrays. */
typedef struct conv_sizes {
  long x, w, y, ws;
} conv_sizes;

static inline conv_sizes conv_sizes_of(const dnnk_conv_desc *d) {
  conv_sizes s;
  s.x = (long)d->n * d->c * d->h * d->w;
  s.w = (long)d->k * d->c * d->kh * d->kw;
  s.y = (long)d->n * d->k * dnnk_conv_out_h(d) * dnnk_conv_out_w(d);
  s.ws = (long)dnnk_conv_workspace(d);
  return s;
}

/* The host's arrays of one layer: inputs x, w, bias, dy; outputs y, dx,
 * dw, db (contiguous, so one transfer or message brings them back). */
typedef struct conv_data {
  dnnk_conv_desc d;
  conv_sizes n;
  float *x, *w, *bias, *dy;
  float *out; /* y | dx | dw | db */
  float *y, *dx, *dw, *db;
  long nout;
} conv_data;

static inline void conv_data_init(conv_data *c, dnnk_conv_desc d) {
  c->d = d;
  c->n = conv_sizes_of(&d);
  c->x = (float *)suite_alloc(sizeof(float) * c->n.x);
  c->w = (float *)suite_alloc(sizeof(float) * c->n.w);
  c->bias = (float *)suite_alloc(sizeof(float) * d.k);
  c->dy = (float *)suite_alloc(sizeof(float) * c->n.y);
  c->nout = c->n.y + c->n.x + c->n.w + d.k;
  c->out = (float *)suite_alloc(sizeof(float) * c->nout);
  c->y = c->out;
  c->dx = c->y + c->n.y;
  c->dw = c->dx + c->n.x;
  c->db = c->dw + c->n.w;
  suite_fill(c->x, c->n.x, 11u, 1.0f);
  suite_fill(c->w, c->n.w, 12u, 0.05f);
  suite_fill(c->bias, d.k, 13u, 0.1f);
  suite_fill(c->dy, c->n.y, 14u, 1.0f);
}

/* The three passes, wherever they run (host, DPU, MPI rank). */
static inline void conv_passes(const dnnk_conv_desc *d, const float *x,
                               const float *w, const float *bias,
                               const float *dy, float *y, float *dx,
                               float *dw, float *db, float *ws) {
  dnnk_conv2d_forward(d, x, w, bias, y, ws);
  dnnk_conv2d_backward_data(d, dy, w, dx, ws);
  dnnk_conv2d_backward_weights(d, x, dy, dw, db, ws);
}

/* After a step: SGD on the weights and bias (host side, every way), and
 * the step's outputs into the running checksum and sum of squares. */
static inline uint64_t conv_after_step(conv_data *c, uint64_t h,
                                       double *l2) {
  const float lr = 1e-4f;
  for (long i = 0; i < c->n.w; ++i)
    c->w[i] -= lr * c->dw[i];
  for (int i = 0; i < c->d.k; ++i)
    c->bias[i] -= lr * c->db[i];
  for (long i = 0; i < c->nout; ++i)
    *l2 += (double)c->out[i] * c->out[i];
  return suite_hash_words(h, c->out, sizeof(float) * c->nout);
}

/* The ISA that computes the layer (where this code runs): ways that share
 * it do the same arithmetic and must agree bit for bit; across ISAs (x86
 * host, Arm DPU) only to rounding (FMA, vector widths). */
#pragma omp declare target
static inline int conv_isa(void) {
#if defined(__aarch64__)
  return 2;
#elif defined(__x86_64__)
  return 1;
#else
  return 0;
#endif
}
#pragma omp end declare target

static inline const char *conv_isa_name(int isa) {
  return isa == 2 ? "aarch64" : isa == 1 ? "x86_64" : "other";
}

typedef struct conv_opts {
  const char *layer;
  int batch, steps, warmup;
} conv_opts;

static inline conv_opts conv_parse(int argc, char **argv) {
  conv_opts o;
  o.layer = suite_opt(argc, argv, "--layer", "3x3");
  o.batch = (int)suite_opt_int(argc, argv, "--batch", 4);
  o.steps = (int)suite_opt_int(argc, argv, "--steps", 10);
  o.warmup = (int)suite_opt_int(argc, argv, "--warmup", 2);
  return o;
}

/* One record: time per step (median and mean over steps), bytes moved per
 * step between host and device, checksum of every step's outputs. */
static inline void conv_report(const char *way, const conv_opts *o,
                               const conv_data *c, double *step_s,
                               uint64_t hash, double l2, int isa) {
  double sum = 0;
  for (int i = 0; i < o->steps; ++i)
    sum += step_s[i];
  double med = suite_median(step_s, o->steps);
  long bytes = (long)sizeof(float) *
               (c->n.x + c->n.w + c->d.k + c->n.y + c->nout);
  double flops = 3.0 * 2.0 * c->d.k * (double)c->n.w / c->d.k *
                 (double)c->n.y / c->d.k;
  char workload[32];
  snprintf(workload, sizeof(workload), "conv%s", o->layer);
  suite_result_begin(workload, way);
  suite_result_num("batch", o->batch);
  suite_result_num("steps", o->steps);
  suite_result_num("ms_per_step", 1e3 * med);
  suite_result_num("ms_per_step_mean", 1e3 * sum / o->steps);
  suite_result_num("mb_moved_per_step", bytes / 1e6);
  suite_result_num("gflops", flops / med / 1e9);
  suite_result_hash("outputs_hash", hash);
  suite_result_num("outputs_l2", l2);
  suite_result_str("isa", conv_isa_name(isa));
  suite_result_end();
}

#endif /* SUITE_CONV_H */
