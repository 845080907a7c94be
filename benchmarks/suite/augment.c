/* Workload 1, the augmentation pipeline (the scheme of the BlueField-2
 * DNN-training studies), ways (a) and (b):
 *
 *   host     the training loop collates and augments each batch itself,
 *            then trains on it
 *   offload  the host collates raw batch b+1 and a `target nowait` region
 *            augments it on the DPU (raw uint8 batch mapped to, augmented
 *            floats mapped from), double-buffered, while the host trains on
 *            batch b; `depend` orders the two
 *
 * The offload loop runs in `parallel num_threads(2)` + `single`: the second
 * thread of the team carries the in-flight target task (blocked in the
 * plugin, sleeping, while the DPU works). This matters when the host has a
 * single core, as the emulated setup gives it: LLVM 14 runs `target nowait`
 * on hidden helper threads, and a thread waiting in `taskwait` for a hidden
 * helper task spins without yielding, so on one core the helper only runs
 * when the scheduler preempts the waiter (milliseconds per batch). With
 * LIBOMP_USE_HIDDEN_HELPER_TASK=0 (run_suite.py sets it) the target task is
 * an ordinary task of the team instead. `--async task` needs no
 * environment: an ordinary `task depend(out)` around a synchronous `target`.
 * On a one-core host the loop also yields the core once after starting each
 * region, so that the other thread ships it to the DPU right away instead of
 * at the next preemption of the training step (about 0.5 ms per batch).
 *
 * `--maps resident` (default) keeps the two raw and two augmented buffers
 * allocated on the DPU for the run (`target enter data`) and moves the
 * bytes with map(always, ...): like the MPI rank, which keeps its buffers;
 * `--maps step` maps them per batch (an allocation on the DPU each time).
 *
 * Way (c), an MPI rank on the DPU, is augment_mpi.c. All three print the
 * same checksums: of every augmented batch, and of the weights trained on
 * them.
 *
 *   suite-augment --mode host|offload|profile [--batch B] [--batches N]
 *       [--warmup W] [--channels K] [--kernel 1|3] [--stride S] [--work R]
 *       [--dataset IMAGES] [--async nowait|task] [--maps resident|step] */
#include <omp.h>
#include <sched.h>

#include "common.h"
#include "ompdpu.h"

/* Arguments of one in-flight augmentation. They must outlive the deferred
 * target task (it maps them when it runs, after augment_issue returned), so
 * they live in one slot per buffer. */
typedef struct aug_slot {
  dnnk_augment_params p;
  long first;
  int n;
} aug_slot;

typedef struct pipeline {
  aug_opts o;
  int dev, as_task, resident;
  long nraw, nout;
  uint8_t *raw[2];
  float *aug[2];
  aug_slot *slot; /* [2] */
} pipeline;

static void fill_slot(pipeline *q, long b, int s) {
  q->slot[s].p = aug_params(b, q->o.dataset / q->o.batch);
  q->slot[s].first = aug_first_index(&q->o, b);
  q->slot[s].n = q->o.batch;
}

/* Starts the augmentation of raw[s] into aug[s] on the DPU; the task
 * completes (depend out on aug[s][0]) when aug[s] holds the batch. */
static void augment_issue(pipeline *q, int s) {
  const uint8_t *raw = q->raw[s];
  float *out = q->aug[s];
  aug_slot *sl = &q->slot[s];
  long nraw = q->nraw, nout = q->nout;
  int dev = q->dev;
  if (q->as_task) {
#pragma omp task depend(out : out[0]) firstprivate(raw, out, sl, nraw, nout, dev)
    {
#pragma omp target device(dev) map(always, to : raw[0 : nraw], sl[0 : 1])     \
    map(always, from : out[0 : nout])
      dnnk_augment_batch(&sl->p, raw, DNNK_NHWC, sl->n, AUG_C, AUG_H, AUG_W,
                         sl->first, out);
    }
  } else {
#pragma omp target device(dev) nowait                                         \
    map(always, to : raw[0 : nraw], sl[0 : 1])                                 \
    map(always, from : out[0 : nout]) depend(out : out[0])
    dnnk_augment_batch(&sl->p, raw, DNNK_NHWC, sl->n, AUG_C, AUG_H, AUG_W,
                       sl->first, out);
  }
}

int main(int argc, char **argv) {
  const char *mode = suite_opt(argc, argv, "--mode", "offload");
  pipeline q;
  q.o = aug_parse(argc, argv);
  const aug_opts *o = &q.o;
  q.as_task = strcmp(suite_opt(argc, argv, "--async", "nowait"), "task") == 0;
  q.resident = strcmp(suite_opt(argc, argv, "--maps", "resident"), "step");
  int offload = strcmp(mode, "offload") == 0;
  int profile = strcmp(mode, "profile") == 0;
  if (!offload && !profile && strcmp(mode, "host") != 0)
    suite_die("--mode must be host, offload or profile");

  uint8_t *data = (uint8_t *)suite_alloc(o->dataset * AUG_IMG_BYTES);
  aug_make_dataset(data, o->dataset);
  q.nraw = o->batch * AUG_IMG_BYTES;
  q.nout = q.nraw;
  long nraw = q.nraw, nout = q.nout;
  for (int s = 0; s < 2; ++s) {
    q.raw[s] = (uint8_t *)suite_alloc(nraw);
    q.aug[s] = (float *)suite_alloc(sizeof(float) * nout);
  }
  q.slot = (aug_slot *)suite_alloc(2 * sizeof(aug_slot));
  uint8_t *raw0 = q.raw[0], *raw1 = q.raw[1];
  float *aug0 = q.aug[0], *aug1 = q.aug[1];
  aug_slot *slot = q.slot;
  aug_trainer tr;
  aug_trainer_init(&tr, o->batch, o->k, o->ks, o->stride, o->work);

  q.dev = -1;
  if (offload) {
    q.dev = ompdpu_device(0);
    if (q.dev < 0)
      suite_die("no DPU (run under ompdpu run or set OMPDPU_DEVICES)");
    int dev = q.dev, on_host = 1;
    /* Check the region really runs on the DPU, not the host fallback. */
#pragma omp target device(dev) map(from : on_host)
    on_host = omp_is_initial_device();
    if (on_host)
      suite_die("target region ran on the host");
    if (q.resident) {
#pragma omp target enter data device(dev)                                     \
    map(alloc : raw0[0 : nraw], raw1[0 : nraw], aug0[0 : nout],                \
        aug1[0 : nout], slot[0 : 2])
    }
  }

  if (profile) {
    /* The parts of a batch on their own, on the host: collation,
     * augmentation and training step (report context). */
    double tc = 0, ta = 0, tt = 0;
    for (long b = 0; b < o->batches; ++b) {
      double s0 = suite_now();
      aug_collate(o, data, b, q.raw[0]);
      double s1 = suite_now();
      fill_slot(&q, b, 0);
      dnnk_augment_batch(&q.slot[0].p, q.raw[0], DNNK_NHWC, o->batch, AUG_C,
                         AUG_H, AUG_W, q.slot[0].first, q.aug[0]);
      double s2 = suite_now();
      aug_train_step(&tr, q.aug[0]);
      tc += s1 - s0;
      ta += s2 - s1;
      tt += suite_now() - s2;
    }
    suite_result_begin("augment", "profile");
    suite_result_num("collate_ms", 1e3 * tc / o->batches);
    suite_result_num("augment_ms", 1e3 * ta / o->batches);
    suite_result_num("train_ms", 1e3 * tt / o->batches);
    suite_result_end();
    return 0;
  }

  uint64_t batch_hash = SUITE_FNV_INIT;
  double stall = 0.0, t0 = 0.0, wall = 0.0;
  if (!offload) {
    for (long i = -o->warmup; i < o->batches; ++i) {
      long b = i < 0 ? i + o->warmup : i;
      if (i == 0)
        t0 = suite_now();
      double s0 = suite_now();
      aug_collate(o, data, b, q.raw[0]);
      fill_slot(&q, b, 0);
      dnnk_augment_batch(&q.slot[0].p, q.raw[0], DNNK_NHWC, o->batch, AUG_C,
                         AUG_H, AUG_W, q.slot[0].first, q.aug[0]);
      if (i < 0)
        continue; /* warm-up: not timed, hashed or trained */
      stall += suite_now() - s0;
      batch_hash = suite_hash_words(batch_hash, q.aug[0], sizeof(float) * nout);
      aug_train_step(&tr, q.aug[0]);
    }
    wall = suite_now() - t0;
  } else {
    /* Nested parallelism stays available to the training step. */
    omp_set_max_active_levels(2);
    int yield = omp_get_num_procs() < 2;
#pragma omp parallel num_threads(2)
#pragma omp single
    {
      /* Warm-up batches: not timed, hashed or trained. */
      for (long b = 0; b < o->warmup; ++b) {
        aug_collate(o, data, b, q.raw[0]);
        fill_slot(&q, b, 0);
        augment_issue(&q, 0);
#pragma omp taskwait
      }
      t0 = suite_now();
      aug_collate(o, data, 0, q.raw[0]);
      fill_slot(&q, 0, 0);
      augment_issue(&q, 0);
      for (long b = 0; b < o->batches; ++b) {
        int s = (int)(b % 2);
        float *cur = q.aug[s];
        double s0 = suite_now();
        if (b + 1 < o->batches) {
          aug_collate(o, data, b + 1, q.raw[1 - s]);
          fill_slot(&q, b + 1, 1 - s);
          augment_issue(&q, 1 - s);
          /* A host with one core: let the team's other thread ship the
           * region to the DPU now (tens of microseconds), rather than when
           * the scheduler next preempts the training below. */
          if (yield)
            sched_yield();
        }
#pragma omp taskwait depend(in : cur[0])
        stall += suite_now() - s0;
        batch_hash = suite_hash_words(batch_hash, cur, sizeof(float) * nout);
        aug_train_step(&tr, cur);
      }
      wall = suite_now() - t0;
    }
    if (q.resident) {
      int dev = q.dev;
#pragma omp target exit data device(dev)                                      \
    map(delete : raw0[0 : nraw], raw1[0 : nraw], aug0[0 : nout],               \
        aug1[0 : nout], slot[0 : 2])
    }
  }
  aug_report(offload ? "offload" : "host", o, wall, stall, batch_hash,
             aug_trainer_hash(&tr));
  return 0;
}
