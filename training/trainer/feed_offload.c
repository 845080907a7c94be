/* The offload way: the batches ahead are augmented on the rank's DPU,
 * FEED_GROUP per region, and the validation runs there in chunks, as
 * `target nowait` regions with `depend`, issued by the training thread
 * outside any parallel region (so the kernels it runs itself keep all their
 * threads) and carried by libomp's hidden helper threads. A region on the
 * host device (`device(omp_get_initial_device())`, also nowait) depending on
 * each one marks it done; the training thread polls those marks instead of
 * waiting in taskwait (an ordinary host task as the mark is never run: its
 * dependence is released on a helper thread and the task waits for a
 * scheduling point of the training thread's serial team). The raw and
 * augmented slots stay mapped (`target enter data`), the test set is mapped
 * once.
 *
 * A DPU that dies fails the regions in flight, and libomptarget then
 * aborts from the helper thread that carried one. The SIGABRT handler
 * marks the DPU lost, warns naming it, and parks that helper thread for
 * good; the training thread sees the mark and does the unfinished work on
 * the host (the same code and draws: the same bytes). */
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "feed.h"
#include "ompdpu.h"

static atomic_int dpu_lost;
static atomic_int in_flight; /* DPU regions issued and not yet marked done */
static pthread_t main_thread;
static int dpu_dev = -1, dpu_rank = 0;

/* The DPU's "HOST:PORT", read before any region (the handler below names it). */
static char dpu_address[256];

/* SIGABRT: from a helper thread while DPU regions are in flight, the DPU
 * is gone; anywhere else, the default action. */
static void on_abort(int sig) {
  if (dpu_dev < 0 || atomic_load(&in_flight) == 0 ||
      pthread_equal(pthread_self(), main_thread)) {
    signal(sig, SIG_DFL);
    raise(sig);
    return;
  }
  if (!atomic_exchange(&dpu_lost, 1)) {
    char msg[512];
    const char *addr = dpu_address[0] ? dpu_address : getenv("OMPDPU_DEVICES");
    int n = snprintf(msg, sizeof msg,
                     "ompdpu-train: warning: rank %d: DPU lost (OpenMP device "
                     "%d, %s): augmentation and validation continue on the "
                     "host\n",
                     dpu_rank, dpu_dev, addr ? addr : "?");
    if (write(2, msg, (size_t)n) < 0)
      n = 0;
  }
  for (;;)
    pause(); /* the helper thread never returns into the failed region */
}

int feed_dpu_lost(void) { return atomic_load(&dpu_lost); }

/* now_s() for the marks: defined here, so the region's device version
 * has it too. */
static double mono_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The worker way's training state on the DPU, made by its first region. */
#pragma omp declare target
static dnnt_trainer dev_trainer;
static int dev_trainer_n;
#pragma omp end declare target

/* Lets the helper threads have the core while the trainer waits. */
static void poll_tasks(void) { sched_yield(); }

/* Starts the augmentation of slots [s, s + n) on the DPU; its mark says
 * steps [g, g + n) are in. */
static void aug_issue(feeder *f, int s, long g, int n) {
  long rs = f->raw_stride, os = f->out_stride;
  const uint8_t *raw = f->raw_all;
  float *out = f->out_all;
  aug_args *a = f->args;
  atomic_long *mark = &f->ready[s];
  int dev = f->dev;
  atomic_int *live = &in_flight;
  atomic_fetch_add(live, 1);
#pragma omp target device(dev) nowait map(always, to                           \
                                          : raw [s * rs:n * rs], a [s:n])      \
    map(always, from                                                           \
        : out [s * os:n * os]) depend(out                                      \
                                      : out[s * os])
  for (int i = s; i < s + n; ++i)
    dnnk_augment_batch(&a[i].p, raw + i * rs, DNNK_NCHW, a[i].n, a[i].c, a[i].h,
                       a[i].w, a[i].first, out + i * os);
  int host = omp_get_initial_device();
#pragma omp target device(host) nowait depend(in                               \
                                              : out[s * os])                   \
    firstprivate(mark, g, n, live)
  {
    for (int i = 0; i < n; ++i)
      atomic_store(&mark[i], g + i);
    atomic_fetch_sub(live, 1);
  }
}

/* Starts validation chunk k on the DPU, after chunk k - 1. */
static void val_issue(feeder *f, int k) {
  run *r = f->r;
  long img = (long)r->test.c * r->test.h * r->test.w;
  long n = r->test_count, np = r->net.nparams;
  long first = (long)k * r->o.val_chunk;
  long count = n - first < r->o.val_chunk ? n - first : r->o.val_chunk;
  const uint8_t *timg = r->test.images + r->test_first * img;
  const int32_t *tlab = r->test.labels + r->test_first;
  const float *vp = f->val_params;
  dnnt_net *net = f->netc;
  float *ws = f->dev_ws;
  dnnt_eval_result *res = f->chunk_res + k;
  const dnnk_augment_params *norm = &r->norm;
  int *token = &f->val_token, dev = f->dev;
  atomic_int *done = &f->val_done, *live = &in_flight;
  atomic_fetch_add(live, 1);
  if (k == 0) {
    /* The epoch's weights travel once, with the first chunk. */
#pragma omp target device(dev) nowait map(always, to                           \
                                          : vp [0:np])                         \
    map(to                                                                     \
        : timg [0:n * img], tlab [0:n], net [0:1], norm [0:1])                 \
        map(from                                                               \
            : res [0:1]) is_device_ptr(ws) depend(inout                        \
                                                  : token[0])
    *res = dnnt_evaluate(net, vp, timg + first * img, tlab + first, count,
                         FEED_EVAL_BATCH, norm, ws);
  } else {
#pragma omp target device(dev) nowait map(to                                   \
                                          : vp [0:np], timg [0:n * img],       \
                                            tlab [0:n], net [0:1], norm [0:1]) \
    map(from                                                                   \
        : res [0:1]) is_device_ptr(ws) depend(inout                            \
                                              : token[0])
    *res = dnnt_evaluate(net, vp, timg + first * img, tlab + first, count,
                         FEED_EVAL_BATCH, norm, ws);
  }
  int host = omp_get_initial_device();
#pragma omp target device(host) nowait depend(inout                            \
                                              : token[0]) firstprivate(done)
  atomic_fetch_add(done, 1);
}

/* One region before the first step: libomp starts its hidden helper
 * threads and the DPU's server its first kernel now, not in epoch 1. */
static void warm_up(feeder *f) {
  if (f->issued >= f->end)
    return;
  const long warm = -3; /* a step no batch has */
  feed_prepare(f, f->issued, 0);
  aug_issue(f, 0, warm, 1);
  off_wait(f, 0, warm);
  atomic_store(&f->ready[0], -1);
}

void off_create(feeder *f) {
  run *r = f->r;
  main_thread = pthread_self();
  f->dev = ompdpu_device(0);
  const char *addr = ompdpu_device_address(0);
  if (addr)
    snprintf(dpu_address, sizeof dpu_address, "%s", addr);
  if (f->dev < 0 && getenv("OMPDPU_DEVICES") && *getenv("OMPDPU_DEVICES"))
    die("--way offload: no DPU of OMPDPU_DEVICES=%s answered (`ompdpu "
        "info` says why)",
        getenv("OMPDPU_DEVICES"));
  if (f->dev < 0)
    die("--way offload: no DPU answered on this node (`ompdpu info` says "
        "which it uses and why; emulated DPUs: `ompdpu run --emulate 1`)");
  const char *hh = getenv("LIBOMP_USE_HIDDEN_HELPER_TASK");
  if (hh && !strcmp(hh, "0"))
    note(r, "ompdpu-train: warning: LIBOMP_USE_HIDDEN_HELPER_TASK=0 makes "
            "every target nowait region synchronous: no overlap\n");
  int on_host = 1, dev = f->dev, pid = 0;
#pragma omp target device(dev) map(from : on_host, pid)
  {
    on_host = omp_is_initial_device();
    pid = getpid();
  }
  if (on_host || pid == getpid())
    die("--way offload: the target region ran on the host, not the DPU");
  note(r,
       "offload: DPU is OpenMP device %d, regions run in process %d (this "
       "is %d)\n",
       dev, pid, (int)getpid());
  dpu_dev = dev;
  dpu_rank = r->rank;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_abort;
  sigaction(SIGABRT, &sa, NULL);
  uint8_t *raw = f->raw_all;
  float *out = f->out_all;
  long nraw = f->slots * f->raw_stride, nout = f->slots * f->out_stride;
#pragma omp target enter data device(dev) map(alloc                            \
                                              : raw [0:nraw], out [0:nout])
  long img = (long)r->test.c * r->test.h * r->test.w, n = r->test_count;
  const uint8_t *timg = r->test.images + r->test_first * img;
  const int32_t *tlab = r->test.labels + r->test_first;
  f->netc = malloc(sizeof(dnnt_net));
  *f->netc = r->net;
  dnnt_net *net = f->netc;
#pragma omp target enter data device(dev)                                      \
    map(to                                                                     \
        : timg [0:n * img], tlab [0:n], net [0:1])
  long nws = dnnt_evaluate_workspace(&r->net, FEED_EVAL_BATCH);
  f->dev_ws = omp_target_alloc(sizeof(float) * (size_t)nws, dev);
  if (!f->dev_ws)
    die("--way offload: cannot allocate %ld floats on the DPU", nws);
  f->nchunks = (int)((n + r->o.val_chunk - 1) / r->o.val_chunk);
  f->chunk_res = calloc((size_t)f->nchunks, sizeof(dnnt_eval_result));
  warm_up(f);
}

void off_issue(feeder *f, int s, long g, int n) {
  for (int i = 0; i < n; ++i)
    atomic_store(&f->ready[s + i], -2);
  if (atomic_load(&dpu_lost)) {
    for (int i = 0; i < n; ++i) {
      feed_augment_host(f, s + i);
      atomic_store(&f->ready[s + i], g + i);
    }
    return;
  }
  aug_issue(f, s, g, n);
  /* A host with one core: let a helper thread ship the region now rather
   * than at the next preemption of the training. */
  if (omp_get_num_procs() < 2)
    sched_yield();
}

void off_wait(feeder *f, int s, long g) {
  while (atomic_load(&f->ready[s]) != g) {
    if (atomic_load(&dpu_lost)) {
      /* Its region died with the DPU (the raw bytes are still here). */
      feed_augment_host(f, s);
      atomic_store(&f->ready[s], g);
      return;
    }
    poll_tasks();
  }
}

/* Validation chunk k on the host: the fallback of a lost DPU. */
static void val_host(feeder *f, int k) {
  run *r = f->r;
  long first = (long)k * r->o.val_chunk, n = r->test_count - first;
  f->chunk_res[k] = feed_eval_host(f, f->val_params, first,
                                   n < r->o.val_chunk ? n : r->o.val_chunk);
}

void off_validate(feeder *f, const float *params) {
  run *r = f->r;
  long np = r->net.nparams;
  int lost = atomic_load(&dpu_lost);
  if (!f->val_params) {
    f->val_params = params;
    if (!lost) {
      int dev = f->dev;
#pragma omp target enter data device(dev) map(alloc : params [0:np])
    }
  }
  if (f->val_params != params)
    die("internal: validation weights moved");
  atomic_store(&f->val_done, 0);
  for (int k = 0; k < f->nchunks; ++k) {
    if (lost) {
      val_host(f, k);
      atomic_fetch_add(&f->val_done, 1);
    } else
      val_issue(f, k);
  }
}

/* Sums the chunks into the rank's result. */
static void gather(feeder *f) {
  dnnt_eval_result t = {0, 0, 0.0};
  for (int k = 0; k < f->nchunks; ++k) {
    t.correct += f->chunk_res[k].correct;
    t.count += f->chunk_res[k].count;
    t.loss_sum += f->chunk_res[k].loss_sum;
  }
  f->val_result = t;
}

/* With the DPU lost, the chunks it did not finish are done here (chunks
 * finish in order; redoing one that just finished gives the same bytes). */
static void finish_on_host(feeder *f) {
  for (int k = atomic_load(&f->val_done); k < f->nchunks; ++k)
    val_host(f, k);
  atomic_store(&f->val_done, f->nchunks);
}

int off_val_poll(feeder *f) {
  poll_tasks();
  if (atomic_load(&f->val_done) < f->nchunks) {
    if (!atomic_load(&dpu_lost))
      return 0;
    finish_on_host(f);
  }
  gather(f);
  return 1;
}

void off_val_wait(feeder *f) {
  /* The last epoch's validation takes the DPU a good part of a second:
   * after a millisecond of yielding, sleep rather than spin the host's core
   * through it. */
  double t0 = now_s();
  while (atomic_load(&f->val_done) < f->nchunks && !atomic_load(&dpu_lost)) {
    if (now_s() - t0 < 1e-3)
      poll_tasks();
    else
      nanosleep(&(struct timespec){0, 200000}, NULL);
  }
  if (atomic_load(&f->val_done) < f->nchunks)
    finish_on_host(f);
  gather(f);
}

void off_destroy(feeder *f) {
  if (atomic_load(&dpu_lost))
    return; /* nothing to free on a DPU that is gone */
#pragma omp taskwait
  int dev = f->dev;
  uint8_t *raw = f->raw_all;
  float *out = f->out_all;
  long nraw = f->slots * f->raw_stride, nout = f->slots * f->out_stride;
#pragma omp target exit data device(dev) map(delete                            \
                                             : raw [0:nraw], out [0:nout])
  omp_target_free(f->dev_ws, dev);
}

void off_grad_issue(feeder *f, const float *params, const float *x,
                    const int32_t *labels, int k, dnnt_batch_key key) {
  run *r = f->r;
  long np = r->net.nparams, img = (long)r->net.in_c * r->net.in_h * r->net.in_w;
  long nx = k * img;
  int dev = f->dev, cap = r->local, host = omp_get_initial_device();
  float scale = (float)k / (float)r->o.batch, *gw = f->gw, *res = f->grad_res;
  dnnt_net *net = f->netc;
  if (!f->grad_mapped) {
    f->gw = gw = malloc(sizeof(float) * (size_t)np);
    res = f->grad_res;
#pragma omp target enter data device(dev) map(alloc : params [0:np], gw [0:np])
    f->grad_mapped = 1;
  }
  atomic_int *done = &f->grad_done, *live = &in_flight;
  double *t1 = &f->grad_t1;
  atomic_store(done, 0);
  atomic_fetch_add(live, 1);
  f->grad_t0 = now_s();
  /* x is an augmented slot: already on the DPU, where it was made. The key
   * travels as scalars: clang 14 passes a struct, even firstprivate, by
   * address, read when this deferred task runs; the caller's next call
   * has then put its own argument where key was. */
  uint64_t key_seed = key.seed;
  uint32_t key_step = key.step;
  long key_first = key.first_image;
#pragma omp target device(dev) nowait map(always, to                           \
                                          : params [0:np])                     \
    map(to                                                                     \
        : x [0:nx], net [0:1]) map(always, to                                  \
                                   : labels [0:k]) map(always, from            \
                                                       : gw [0:np], res [0:2]) \
        depend(out                                                             \
               : gw[0])
  {
    if (dev_trainer_n == 0 && dnnt_trainer_init(&dev_trainer, net, cap) == 0)
      dev_trainer_n = cap;
    long c = 0;
    dnnt_batch_key dkey = {key_seed, key_step, key_first};
    res[0] = dnnt_forward_train(&dev_trainer, params, x, labels, k, dkey, &c);
    dnnt_backward(&dev_trainer, params, labels, k, scale, gw, NULL, NULL);
    res[1] = (float)c;
  }
#pragma omp target device(host) nowait depend(in                               \
                                              : gw[0])                         \
    firstprivate(done, live, t1)
  {
    *t1 = mono_now();
    atomic_store(done, 1);
    atomic_fetch_sub(live, 1);
  }
}

int off_grad_wait(feeder *f) {
  while (!atomic_load(&f->grad_done)) {
    if (atomic_load(&dpu_lost))
      return -1;
    poll_tasks();
  }
  return 0;
}
