/* The training loop: per step a batch from the feeder, forward, backward
 * with each layer's gradient allreduce started as soon as it is ready, SGD;
 * per epoch the weight hash across ranks, a validation started (finished
 * later in the offloaded ways) and a checkpoint once it is in. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dnnt_checkpoint.h"
#include "trainer.h"

/* Gradient allreduces in flight, one per layer with parameters. */
typedef struct reducer {
  const run *r;
  float *grads;
  MPI_Request req[DNNT_MAX_LAYERS];
  int nreq;
} reducer;

/* dnnt_backward's callback: start layer i's allreduce, or drive progress. */
static void grad_ready(void *ctx, int i) {
  reducer *d = (reducer *)ctx;
  if (d->r->ranks == 1)
    return;
  if (i < 0) {
    int flag;
    if (d->nreq)
      MPI_Testall(d->nreq, d->req, &flag, MPI_STATUSES_IGNORE);
    return;
  }
  const dnnt_layer *l = &d->r->net.layer[i];
  MPI_Iallreduce(MPI_IN_PLACE, d->grads + l->woff, (int)(l->wcount + l->bcount),
                 MPI_FLOAT, MPI_SUM, d->r->hosts, &d->req[d->nreq++]);
}

/* A validation started but not yet reported. */
typedef struct pending {
  int active, reducing;
  epoch_rec rec;
  double local[3], sum[3];
  MPI_Request req;
  MPI_Comm comm; /* its own communicator: no ordering against gradients */
} pending;

/* State kept for the checkpoint of the epoch being validated. */
typedef struct snapshot {
  float *params, *mom;
  uint32_t step;
  int epoch;
} snapshot;

static void save_checkpoint(const run *r, const snapshot *s,
                            const epoch_rec *recs, int nrecs) {
  if (!r->o.checkpoint || r->rank != 0)
    return;
  dnnt_checkpoint c = {0};
  c.net_hash = dnnt_hash((const float *)&r->net, sizeof r->net / 4);
  c.seed = r->o.seed;
  c.config = run_config_hash(r);
  run_settings_text(r, c.settings, sizeof c.settings);
  c.epoch = s->epoch;
  c.step = s->step;
  c.nparams = r->net.nparams;
  c.params = s->params;
  c.momentum = s->mom;
  c.history = (void *)recs;
  c.history_size = (size_t)nrecs * sizeof(epoch_rec);
  char err[1024];
  /* A run asked for checkpoints must not go on without them. */
  if (dnnt_checkpoint_save(r->o.checkpoint, &c, err, sizeof err))
    die("%s (after epoch %d; the previous checkpoint stays)", err, s->epoch);
}

/* Completes the pending validation if its result is in (wait: block). */
static void settle(const run *r, feeder *f, pending *p, epoch_rec *recs,
                   int *nrecs, const snapshot *s, int wait) {
  if (!p->active)
    return;
  if (!p->reducing) {
    dnnt_eval_result res;
    if (wait)
      res = feeder_val_wait(f);
    else if (!feeder_val_poll(f, &res))
      return;
    p->local[0] = (double)res.correct;
    p->local[1] = (double)res.count;
    p->local[2] = res.loss_sum;
    MPI_Iallreduce(p->local, p->sum, 3, MPI_DOUBLE, MPI_SUM, p->comm, &p->req);
    p->reducing = 1;
  }
  int done = 0;
  if (wait)
    MPI_Wait(&p->req, MPI_STATUS_IGNORE), done = 1;
  else
    MPI_Test(&p->req, &done, MPI_STATUS_IGNORE);
  if (!done)
    return;
  p->rec.has_test = 1;
  p->rec.test_acc = p->sum[1] > 0 ? p->sum[0] / p->sum[1] : 0.0;
  p->rec.test_loss = p->sum[1] > 0 ? p->sum[2] / p->sum[1] : 0.0;
  recs[(*nrecs)++] = p->rec;
  progress_clear(r);
  print_epoch(r, &p->rec);
  save_checkpoint(r, s, recs, *nrecs);
  p->active = p->reducing = 0;
}

/* Checks that every rank holds the same weights. */
static uint64_t check_hash(const run *r, const float *params, int epoch) {
  uint64_t h = dnnt_hash(params, r->net.nparams);
  uint64_t *all = malloc(sizeof(uint64_t) * r->ranks);
  MPI_Allgather(&h, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, r->hosts);
  for (int i = 1; i < r->ranks; ++i)
    if (all[i] != all[0])
      die("after epoch %d rank %d's weights (hash %016llx) differ from rank "
          "0's (%016llx)",
          epoch + 1, i, (unsigned long long)all[i], (unsigned long long)all[0]);
  free(all);
  return h;
}

void train_loop(run *r, epoch_rec *recs, int *nrecs, float *params, float *mom,
                int first_epoch) {
  const options *o = &r->o;
  long np = r->net.nparams, spe = r->steps_per_epoch;
  int end_epoch =
      o->stop_after && o->stop_after < o->epochs ? o->stop_after : o->epochs;
  dnnt_trainer tr;
  if (dnnt_trainer_init(&tr, &r->net, r->local))
    die("out of memory for the activations of a batch of %d", r->local);
  float *grads = malloc(sizeof(float) * np);
  int32_t *labels = malloc(sizeof(int32_t) * r->local);
  snapshot snap = {malloc(sizeof(float) * np), malloc(sizeof(float) * np), 0,
                   0};
  pending pend;
  memset(&pend, 0, sizeof pend);
  MPI_Comm_dup(r->hosts, &pend.comm);
  reducer red = {r, grads, {0}, 0};
  feeder *f = feeder_create(r, first_epoch * spe, end_epoch * spe);
  float scale = (float)r->local / (float)o->batch;

  for (int e = first_epoch; e < end_epoch; ++e) {
    double t0 = now_s(), cpu0 = thread_cpu_s(), t_aug = 0, t_comp = 0, t_ar = 0;
    double val0 = feeder_val_seconds(f), loss_sum = 0;
    long correct = 0;
    for (long b = 0; b < spe; ++b) {
      long g = e * spe + b;
      double stall = 0;
      const float *x = feeder_batch(f, g, &stall);
      t_aug += stall;
      const int32_t *idx = step_indices(r, g);
      for (int i = 0; i < r->local; ++i)
        labels[i] = r->train.labels[idx[i]];
      double c0 = now_s();
      dnnt_batch_key key = {o->seed, (uint32_t)g, (long)r->rank * r->local};
      long ok = 0;
      float loss;
      red.nreq = 0;
      if (o->worker) {
        /* The split batch's gradient is complete only at the end: the
         * allreduces start then. */
        loss = worker_step(r, f, &tr, params, x, labels, key, grads, &ok);
        for (int i = 0; i < r->net.nlayers; ++i)
          if (r->net.layer[i].wcount)
            grad_ready(&red, i);
      } else {
        loss = dnnt_forward_train(&tr, params, x, labels, r->local, key, &ok);
        dnnt_backward(&tr, params, labels, r->local, scale, grads, grad_ready,
                      &red);
      }
      double a0 = now_s();
      if (red.nreq)
        MPI_Waitall(red.nreq, red.req, MPI_STATUSES_IGNORE);
      t_ar += now_s() - a0;
      float lr = dnnt_lr_at(&o->sgd, e + (double)b / spe);
      dnnt_sgd_step(&o->sgd, lr, params, mom, grads, np);
      t_comp += now_s() - c0;
      loss_sum += (double)loss * r->local;
      correct += ok;
      settle(r, f, &pend, recs, nrecs, &snap, 0);
      progress_step(r, e, b, loss_sum / ((b + 1) * (double)r->local),
                    (double)correct / ((b + 1) * (double)r->local), t0);
    }
    if (o->worker)
      worker_epoch_note(r);
    double sums[2] = {loss_sum, (double)correct}, all[2];
    MPI_Allreduce(sums, all, 2, MPI_DOUBLE, MPI_SUM, r->hosts);
    epoch_rec rec;
    memset(&rec, 0, sizeof rec);
    rec.epoch = e + 1;
    rec.loss = all[0] / ((double)spe * o->batch);
    if (!isfinite(rec.loss))
      die("epoch %d: the training loss is %g: training diverged (try a "
          "smaller --lr)",
          e + 1, rec.loss);
    rec.train_acc = all[1] / ((double)spe * o->batch);
    rec.lr = dnnt_lr_at(&o->sgd, e + 1.0 - 1.0 / spe);
    rec.hash = check_hash(r, params, e);
    /* The previous validation must be in before its snapshot is reused. */
    settle(r, f, &pend, recs, nrecs, &snap, 1);
    memcpy(snap.params, params, sizeof(float) * np);
    memcpy(snap.mom, mom, sizeof(float) * np);
    snap.step = (uint32_t)((e + 1) * spe);
    snap.epoch = e + 1;
    feeder_validate(f, e, snap.params);
    rec.time = now_s() - t0;
    rec.t_cpu = thread_cpu_s() - cpu0;
    rec.images_s = (double)spe * o->batch / rec.time;
    rec.t_compute = t_comp - t_ar;
    rec.t_allreduce = t_ar;
    rec.t_aug = t_aug;
    rec.t_val = feeder_val_seconds(f) - val0;
    pend.rec = rec;
    pend.active = 1;
    settle(r, f, &pend, recs, nrecs, &snap, o->way == WAY_HOST);
  }
  settle(r, f, &pend, recs, nrecs, &snap, 1);
  progress_clear(r);
  feeder_destroy(f);
  dnnt_trainer_free(&tr);
  free(grads);
  free(labels);
  free(snap.params);
  free(snap.mom);
  MPI_Comm_free(&pend.comm);
}
