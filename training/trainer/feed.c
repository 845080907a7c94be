/* The feeder: a ring of slots holding the next batches, prepared on the
 * host, on the DPU (feed_offload.c) or by the DPU's MPI rank
 * (feed_mpi.c); and the validation, started at each epoch's end. */
#include <stdlib.h>
#include <string.h>

#include "feed.h"

static void *xalloc(size_t bytes) {
  void *p = NULL;
  if (posix_memalign(&p, 64, bytes ? bytes : 64))
    die("out of memory (%zu bytes)", bytes);
  return p;
}

feeder *feeder_create(run *r, long first_step, long end_step) {
  feeder *f = calloc(1, sizeof *f);
  f->r = r;
  f->group = r->o.way == WAY_OFFLOAD ? FEED_GROUP : 1;
  f->slots = r->o.way == WAY_HOST ? 1 : r->o.prefetch + 1;
  f->slots = (f->slots + f->group - 1) / f->group * f->group;
  /* Two groups at least: one is made while the other is used. */
  if (f->group > 1 && f->slots < 2 * f->group)
    f->slots = 2 * f->group;
  if (f->slots > FEED_MAX_SLOTS)
    f->slots = FEED_MAX_SLOTS / f->group * f->group;
  f->issued = first_step;
  f->end = end_step;
  long img = (long)r->net.in_c * r->net.in_h * r->net.in_w;
  f->nraw = r->local * img;
  f->nout = r->local * img;
  /* Contiguous slots: one region maps a group of them as one section. */
  f->raw_stride = (f->nraw + 63) / 64 * 64;
  f->out_stride = (f->nout + 15) / 16 * 16;
  f->raw_all = xalloc((size_t)(f->slots * f->raw_stride));
  f->out_all = xalloc(sizeof(float) * (size_t)(f->slots * f->out_stride));
  f->args = xalloc(sizeof(aug_args) * f->slots);
  for (int s = 0; s < f->slots; ++s) {
    f->raw[s] = f->raw_all + s * f->raw_stride;
    f->out[s] = f->out_all + s * f->out_stride;
    atomic_init(&f->ready[s], -1);
  }
  f->host_ws =
      xalloc(sizeof(float) * dnnt_evaluate_workspace(&r->net, FEED_EVAL_BATCH));
  if (r->o.way == WAY_OFFLOAD)
    off_create(f);
  else if (r->o.way == WAY_MPI)
    mpi_create(f);
  return f;
}

void feed_prepare(feeder *f, long g, int s) {
  run *r = f->r;
  collate(r, g, f->raw[s]);
  aug_args *a = &f->args[s];
  a->p = step_params(r, g, &a->first);
  a->n = r->local;
  a->c = r->net.in_c, a->h = r->net.in_h, a->w = r->net.in_w;
}

void feed_augment_host(feeder *f, int s) {
  const aug_args *a = &f->args[s];
  dnnk_augment_batch(&a->p, f->raw[s], DNNK_NCHW, a->n, a->c, a->h, a->w,
                     a->first, f->out[s]);
}

dnnt_eval_result feed_eval_host(feeder *f, const float *params, long first,
                                long count) {
  run *r = f->r;
  long img = (long)r->test.c * r->test.h * r->test.w;
  long at = r->test_first + first;
  return dnnt_evaluate(&r->net, params, r->test.images + at * img,
                       r->test.labels + at, count, FEED_EVAL_BATCH, &r->norm,
                       f->host_ws);
}

const float *feeder_batch(feeder *f, long g, double *stall) {
  double t0 = now_s();
  int s = (int)(g % f->slots);
  if (f->r->o.way == WAY_HOST) {
    feed_prepare(f, g, 0);
    feed_augment_host(f, 0);
    *stall = now_s() - t0;
    return f->out[0];
  }
  /* Keep the ring full: steps up to g + slots - 1 in flight. */
  if (f->issued < g)
    f->issued = g;
  while (f->issued < f->end) {
    /* A group ends at a multiple of its size: it never wraps the ring. */
    long n = f->group - f->issued % f->group;
    if (n > f->end - f->issued)
      n = f->end - f->issued;
    if (f->issued + n > g + f->slots)
      break;
    int t = (int)(f->issued % f->slots);
    if (f->r->o.way == WAY_OFFLOAD) {
      for (long i = 0; i < n; ++i)
        feed_prepare(f, f->issued + i, t + (int)i);
      off_issue(f, t, f->issued, (int)n);
    } else
      mpi_issue(f, t, f->issued);
    f->issued += n;
  }
  if (f->r->o.way == WAY_OFFLOAD)
    off_wait(f, s, g);
  else
    mpi_wait(f, s);
  *stall = now_s() - t0;
  return f->out[s];
}

void feeder_validate(feeder *f, int epoch, const float *params) {
  double t0 = now_s();
  run *r = f->r;
  f->val_running = 1;
  if (r->o.way == WAY_HOST) {
    /* The chunks of the other ways, summed in the same order: the same
     * bits. */
    dnnt_eval_result t = {0, 0, 0.0};
    for (long first = 0; first < r->test_count; first += r->o.val_chunk) {
      long n = r->test_count - first;
      dnnt_eval_result c = feed_eval_host(
          f, params, first, n < r->o.val_chunk ? n : r->o.val_chunk);
      t.correct += c.correct;
      t.count += c.count;
      t.loss_sum += c.loss_sum;
    }
    f->val_result = t;
  } else if (r->o.way == WAY_OFFLOAD)
    off_validate(f, params);
  else
    mpi_validate(f, epoch, params);
  f->val_seconds += now_s() - t0;
}

int feeder_val_poll(feeder *f, dnnt_eval_result *res) {
  if (!f->val_running)
    return 0;
  int done = f->r->o.way == WAY_HOST      ? 1
             : f->r->o.way == WAY_OFFLOAD ? off_val_poll(f)
                                          : mpi_val_poll(f, 0);
  if (done) {
    f->val_running = 0;
    *res = f->val_result;
  }
  return done;
}

dnnt_eval_result feeder_val_wait(feeder *f) {
  double t0 = now_s();
  if (f->val_running && f->r->o.way == WAY_OFFLOAD)
    off_val_wait(f);
  else if (f->val_running && f->r->o.way == WAY_MPI)
    mpi_val_poll(f, 1);
  f->val_running = 0;
  f->val_seconds += now_s() - t0;
  return f->val_result;
}

double feeder_val_seconds(feeder *f) { return f->val_seconds; }

void feeder_destroy(feeder *f) {
  if (f->r->o.way == WAY_OFFLOAD)
    off_destroy(f);
  else if (f->r->o.way == WAY_MPI)
    mpi_destroy(f);
  free(f->raw_all);
  free(f->out_all);
  free(f->args);
  free(f->host_ws);
  free(f);
}
