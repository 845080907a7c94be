/* Shared helpers of the benchmark suite's programs: clocks, checksums,
 * synthetic inputs, command-line options and the one-line result record
 * (`RESULT {json}`) that benchmarks/suite/run_suite.py collects.
 *
 * Everything here is host code; the programs compile it into host-only,
 * offload and MPI executables alike. */
#ifndef SUITE_COMMON_H
#define SUITE_COMMON_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dnnk.h"

/* Seconds on the monotonic clock. */
static inline double suite_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* FNV-1a (64 bit) of n bytes, continuing from h (start with
 * SUITE_FNV_INIT): the checksum every way of a workload must reproduce. */
#define SUITE_FNV_INIT 0xcbf29ce484222325ull
static inline uint64_t suite_fnv(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = (const unsigned char *)data;
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

/* A faster checksum for large arrays: FNV-style over 64-bit words (the
 * tail byte-wise). Used on every augmented batch. */
static inline uint64_t suite_hash_words(uint64_t h, const void *data,
                                        size_t n) {
  const unsigned char *p = (const unsigned char *)data;
  size_t words = n / 8;
  for (size_t i = 0; i < words; ++i) {
    uint64_t w;
    memcpy(&w, p + 8 * i, 8);
    h = (h ^ w) * 0x100000001b3ull;
    h ^= h >> 29;
  }
  return suite_fnv(h, p + 8 * words, n - 8 * words);
}

/* Deterministic floats in [-scale, scale) from a 32-bit LCG. */
static inline void suite_fill(float *v, long n, uint32_t seed, float scale) {
  for (long i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    v[i] = ((float)(seed >> 8) / 8388608.0f - 1.0f) * scale;
  }
}

/* Allocation that dies loudly instead of returning NULL. */
static inline void *suite_alloc(size_t bytes) {
  void *p = NULL;
  if (posix_memalign(&p, 64, bytes ? bytes : 64) != 0) {
    fprintf(stderr, "suite: out of memory (%zu bytes)\n", bytes);
    exit(3);
  }
  return p;
}

/* Fails the program with a message (exit status 4: wrong result or setup). */
static inline void suite_die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "suite error: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  exit(4);
}

/* --name value options: suite_opt_int(argc, argv, "--batches", 20). */
static inline const char *suite_opt(int argc, char **argv, const char *name,
                                    const char *def) {
  for (int i = 1; i + 1 < argc; ++i)
    if (strcmp(argv[i], name) == 0)
      return argv[i + 1];
  return def;
}
static inline long suite_opt_int(int argc, char **argv, const char *name,
                                 long def) {
  const char *v = suite_opt(argc, argv, name, NULL);
  return v ? strtol(v, NULL, 10) : def;
}

/* Median of n doubles (sorts v). */
static inline int suite_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
static inline double suite_median(double *v, int n) {
  if (n <= 0)
    return 0.0;
  qsort(v, (size_t)n, sizeof(double), suite_cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The result record: RESULT {"workload":...,"way":...,"key":value,...}.
 * Build it with suite_result_begin, then _num / _str / _hash, then _end. */
static char suite_result_buf[4096];
static inline void suite_result_begin(const char *workload, const char *way) {
  snprintf(suite_result_buf, sizeof(suite_result_buf),
           "{\"workload\":\"%s\",\"way\":\"%s\"", workload, way);
}
static inline void suite_result_num(const char *key, double v) {
  size_t n = strlen(suite_result_buf);
  snprintf(suite_result_buf + n, sizeof(suite_result_buf) - n,
           ",\"%s\":%.9g", key, v);
}
static inline void suite_result_str(const char *key, const char *v) {
  size_t n = strlen(suite_result_buf);
  snprintf(suite_result_buf + n, sizeof(suite_result_buf) - n,
           ",\"%s\":\"%s\"", key, v);
}
static inline void suite_result_hash(const char *key, uint64_t h) {
  char s[24];
  snprintf(s, sizeof(s), "%016llx", (unsigned long long)h);
  suite_result_str(key, s);
}
static inline void suite_result_end(void) {
  printf("RESULT %s}\n", suite_result_buf);
  fflush(stdout);
}

/* ------------------------------------------------- workload 1 inputs -- */

/* Image geometry of the augmentation pipeline: CIFAR-like 32x32 RGB,
 * stored NHWC as uint8 (as decoded JPEG/PNG batches arrive). */
enum { AUG_C = 3, AUG_H = 32, AUG_W = 32 };
#define AUG_IMG_BYTES ((long)AUG_C * AUG_H * AUG_W)

/* A synthetic data set of n images: smooth gradients plus noise, so that
 * crops, flips and contrast changes all move bytes. */
static inline void aug_make_dataset(uint8_t *img, long n) {
  uint32_t s = 12345u;
  for (long i = 0; i < n; ++i)
    for (int y = 0; y < AUG_H; ++y)
      for (int x = 0; x < AUG_W; ++x)
        for (int c = 0; c < AUG_C; ++c) {
          s = s * 1664525u + 1013904223u;
          int v = (int)((i * 37 + y * 5 + x * 3 + c * 60) % 200) +
                  (int)(s >> 27);
          img[((i * AUG_H + y) * AUG_W + x) * AUG_C + c] = (uint8_t)v;
        }
}

/* The augmentation of batch b (CIFAR-10 recipe: pad 4 and crop 32, random
 * flip, brightness and contrast jitter, normalisation). The epoch advances
 * every time the batches wrap around the data set, so every batch draws
 * fresh randomness. */
static inline dnnk_augment_params aug_params(long b, long batches_per_epoch) {
  dnnk_augment_params p;
  dnnk_augment_defaults(&p, AUG_H, AUG_W);
  p.seed = 0x5eed5eedull;
  p.epoch = (uint32_t)(b / batches_per_epoch);
  p.pad = 4;
  p.out_h = AUG_H;
  p.out_w = AUG_W;
  p.flip = 1;
  p.brightness = 0.2f;
  p.contrast = 0.2f;
  const float mean[3] = {0.4914f, 0.4822f, 0.4465f};
  const float std[3] = {0.2470f, 0.2435f, 0.2616f};
  for (int c = 0; c < 3; ++c) {
    p.mean[c] = mean[c];
    p.std[c] = std[c];
  }
  return p;
}

/* The training step that consumes an augmented batch: `work` rounds of
 * forward and backward (weights and data) of a 3x3 convolution 3 -> k
 * channels over the batch, with an SGD update of the weights after each
 * round (loss 0.5 |y|^2, so dy = y). The weights after the last batch are
 * the checksum of the whole pipeline. */
typedef struct aug_trainer {
  dnnk_conv_desc d;
  int work;
  float *wt, *dwt, *dbias, *bias, *y, *dx, *ws;
} aug_trainer;

static inline void aug_trainer_init(aug_trainer *t, int batch, int k,
                                    int ks, int stride, int work) {
  dnnk_conv_desc d = {batch, AUG_C, AUG_H,  AUG_W,  k,
                      ks,    ks,    stride, stride, ks / 2, ks / 2};
  t->d = d;
  t->work = work;
  long nw = (long)k * AUG_C * ks * ks;
  long ny = (long)batch * k * dnnk_conv_out_h(&d) * dnnk_conv_out_w(&d);
  t->wt = (float *)suite_alloc(sizeof(float) * nw);
  t->dwt = (float *)suite_alloc(sizeof(float) * nw);
  t->bias = (float *)suite_alloc(sizeof(float) * k);
  t->dbias = (float *)suite_alloc(sizeof(float) * k);
  t->y = (float *)suite_alloc(sizeof(float) * ny);
  t->dx = (float *)suite_alloc(sizeof(float) * batch * AUG_IMG_BYTES);
  t->ws = (float *)suite_alloc(sizeof(float) * dnnk_conv_workspace(&t->d));
  suite_fill(t->wt, nw, 77u, 0.1f);
  memset(t->bias, 0, sizeof(float) * k);
}

static inline void aug_train_step(aug_trainer *t, const float *x) {
  long nw = (long)t->d.k * AUG_C * t->d.kh * t->d.kw;
  const float lr = 1e-6f;
  for (int r = 0; r < t->work; ++r) {
    dnnk_conv2d_forward(&t->d, x, t->wt, t->bias, t->y, t->ws);
    dnnk_conv2d_backward_data(&t->d, t->y, t->wt, t->dx, t->ws);
    dnnk_conv2d_backward_weights(&t->d, x, t->y, t->dwt, t->dbias, t->ws);
    for (long i = 0; i < nw; ++i)
      t->wt[i] -= lr * t->dwt[i];
    for (int i = 0; i < t->d.k; ++i)
      t->bias[i] -= lr * t->dbias[i];
  }
}

static inline uint64_t aug_trainer_hash(const aug_trainer *t) {
  uint64_t h = suite_fnv(SUITE_FNV_INIT, t->wt,
                         sizeof(float) * t->d.k * AUG_C * t->d.kh * t->d.kw);
  return suite_fnv(h, t->bias, sizeof(float) * t->d.k);
}

/* Options of workload 1, shared by every way. */
typedef struct aug_opts {
  int batch, batches, warmup, k, ks, stride, work;
  long dataset; /* images in the data set */
} aug_opts;

static inline aug_opts aug_parse(int argc, char **argv) {
  aug_opts o;
  o.batch = (int)suite_opt_int(argc, argv, "--batch", 128);
  o.batches = (int)suite_opt_int(argc, argv, "--batches", 30);
  o.warmup = (int)suite_opt_int(argc, argv, "--warmup", 3);
  o.k = (int)suite_opt_int(argc, argv, "--channels", 16);
  o.ks = (int)suite_opt_int(argc, argv, "--kernel", 3);
  o.stride = (int)suite_opt_int(argc, argv, "--stride", 1);
  o.work = (int)suite_opt_int(argc, argv, "--work", 1);
  o.dataset = suite_opt_int(argc, argv, "--dataset", 2048);
  if (o.dataset < o.batch)
    o.dataset = o.batch;
  o.dataset -= o.dataset % o.batch;
  return o;
}

/* First image of batch b (global index: the counter of its random draws). */
static inline long aug_first_index(const aug_opts *o, long b) {
  return b * o->batch;
}

/* Collation, as a data loader does it: the images of batch b are a
 * shuffled sample of the data set (global index g -> image (g * 40503) mod
 * size, a permutation of each epoch for power-of-two sizes), gathered into
 * one contiguous raw batch. Every way does this on the host. */
static inline void aug_collate(const aug_opts *o, const uint8_t *data, long b,
                               uint8_t *raw) {
  for (int i = 0; i < o->batch; ++i) {
    long g = aug_first_index(o, b) + i;
    long img = (long)(((unsigned long)g * 40503ul) % (unsigned long)o->dataset);
    memcpy(raw + i * AUG_IMG_BYTES, data + img * AUG_IMG_BYTES, AUG_IMG_BYTES);
  }
}

/* Records of workload 1: batches/s and host stall (time the training loop
 * spent not training) per batch. */
static inline void aug_report(const char *way, const aug_opts *o, double wall,
                              double stall, uint64_t batch_hash,
                              uint64_t weights_hash) {
  suite_result_begin("augment", way);
  suite_result_num("batch", o->batch);
  suite_result_num("batches", o->batches);
  suite_result_num("work", o->work);
  suite_result_num("batches_per_s", o->batches / wall);
  suite_result_num("ms_per_batch", 1e3 * wall / o->batches);
  suite_result_num("stall_ms_per_batch", 1e3 * stall / o->batches);
  suite_result_num("stall_fraction", stall / wall);
  suite_result_hash("batches_hash", batch_hash);
  suite_result_hash("weights_hash", weights_hash);
  suite_result_end();
}

#endif /* SUITE_COMMON_H */
