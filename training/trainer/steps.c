/* Which images a rank trains on at each global step, and with which
 * augmentation draws: all from the seed, so any way, any restart and any
 * split of a batch sees the same images and draws. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "trainer.h"

static double clock_s(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double now_s(void) { return clock_s(CLOCK_MONOTONIC); }

double thread_cpu_s(void) { return clock_s(CLOCK_THREAD_CPUTIME_ID); }

void note(const run *r, const char *fmt, ...) {
  if (r && r->rank != 0)
    return;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fflush(stderr);
}

void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "ompdpu-train: error: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  fflush(stderr);
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size == 1)
    exit(2); /* alone: no abort banner over the message */
  MPI_Abort(MPI_COMM_WORLD, 2);
  exit(2);
}

long step_epoch(const run *r, long g) { return g / r->steps_per_epoch; }

/* Fisher-Yates shuffle of the training set for one epoch, Philox draws. */
static void make_perm(const run *r, int epoch, int32_t *perm) {
  long n = r->train.count;
  for (long i = 0; i < n; ++i)
    perm[i] = (int32_t)i;
  for (long i = n - 1; i > 0; --i) {
    uint32_t x =
        dnnk_philox(r->o.seed, (uint32_t)epoch, (uint64_t)i, 0x7065726du, 0);
    long j = (long)(x % (uint32_t)(i + 1));
    int32_t t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
}

const int32_t *step_indices(run *r, long g) {
  int epoch = (int)step_epoch(r, g), slot = epoch % 2;
  if (!r->perm[slot]) {
    r->perm[slot] = (int32_t *)malloc(sizeof(int32_t) * r->train.count);
    r->perm_epoch[slot] = -1;
  }
  if (r->perm_epoch[slot] != epoch) {
    make_perm(r, epoch, r->perm[slot]);
    r->perm_epoch[slot] = epoch;
  }
  long b = g % r->steps_per_epoch;
  return r->perm[slot] + b * r->o.batch + (long)r->rank * r->local;
}

dnnk_augment_params step_params(const run *r, long g, long *first) {
  dnnk_augment_params p = r->aug;
  p.epoch = (uint32_t)step_epoch(r, g);
  *first = (g % r->steps_per_epoch) * r->o.batch + (long)r->rank * r->local;
  return p;
}

void collate(run *r, long g, uint8_t *out) {
  const int32_t *idx = step_indices(r, g);
  long img = (long)r->train.c * r->train.h * r->train.w;
  for (int i = 0; i < r->local; ++i)
    memcpy(out + i * img, r->train.images + idx[i] * img, (size_t)img);
}
