/* The MPI way, DPU side: an MPI rank on the DPU serves its host rank:
 * augments the raw batches it receives and validates the weights of each
 * epoch in chunks, between batches, so that augmentation never waits for a
 * whole validation. The same chunks and arithmetic as the offload way. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "feed.h"

/* Received test set, weights and the validation in progress. */
typedef struct dpu_state {
  dnnt_dataset test;
  float *params, *ws;
  int val_active;
  long val_next;
  dnnt_eval_result val;
} dpu_state;

/* A DPU rank started with other options would augment other batches, or
 * overflow its buffers with larger ones: it must run the host's. */
static void check_settings(const run *r, int host) {
  char theirs[FEED_SETTINGS_BYTES], mine[FEED_SETTINGS_BYTES], diff[1024];
  MPI_Recv(theirs, (int)sizeof theirs, MPI_CHAR, host, TAG_TEST, MPI_COMM_WORLD,
           MPI_STATUS_IGNORE);
  theirs[sizeof theirs - 1] = 0;
  run_settings_text(r, mine, sizeof mine);
  if (!strcmp(theirs, mine))
    return;
  run_settings_differences(theirs, mine, diff, sizeof diff);
  die("--role dpu: this DPU rank's options differ from those of its host "
      "rank (MPI rank %d): %s; give both the same",
      host, diff[0] ? diff : mine);
}

static void recv_test(dpu_state *d, int host) {
  int64_t head[4];
  MPI_Recv(head, 4, MPI_INT64_T, host, TAG_TEST, MPI_COMM_WORLD,
           MPI_STATUS_IGNORE);
  d->test.count = head[0];
  d->test.c = (int)head[1], d->test.h = (int)head[2], d->test.w = (int)head[3];
  long img = (long)d->test.c * d->test.h * d->test.w;
  d->test.images = malloc((size_t)(d->test.count * img));
  d->test.labels = malloc(sizeof(int32_t) * (size_t)d->test.count);
  MPI_Recv(d->test.images, (int)(d->test.count * img), MPI_BYTE, host, TAG_TEST,
           MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Recv(d->test.labels, (int)d->test.count, MPI_INT32_T, host, TAG_TEST,
           MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

/* One chunk of the validation; the counts go back when it is complete. */
static void val_chunk(run *r, dpu_state *d, int host) {
  long img = (long)d->test.c * d->test.h * d->test.w;
  long n = d->test.count - d->val_next;
  n = n < r->o.val_chunk ? n : r->o.val_chunk;
  dnnt_eval_result c = dnnt_evaluate(
      &r->net, d->params, d->test.images + d->val_next * img,
      d->test.labels + d->val_next, n, FEED_EVAL_BATCH, &r->norm, d->ws);
  d->val.correct += c.correct;
  d->val.count += c.count;
  d->val.loss_sum += c.loss_sum;
  d->val_next += n;
  if (d->val_next >= d->test.count) {
    double reply[3] = {(double)d->val.correct, (double)d->val.count,
                       d->val.loss_sum};
    MPI_Send(reply, 3, MPI_DOUBLE, host, TAG_VAL_OUT, MPI_COMM_WORLD);
    d->val_active = 0;
  }
}

/* Waits for the host's next message as ompdpu-server's sessions wait:
 * busy polling for 1 ms, then polling every 50 us, so an idle rank leaves
 * its core to others (an emulated DPU shares the machine). */
static void idle_wait(int host, MPI_Status *st) {
  double t0 = now_s();
  int flag = 0;
  while (!flag) {
    MPI_Iprobe(host, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, st);
    if (!flag && now_s() - t0 > 1e-3) {
      struct timespec ts = {0, 50000};
      nanosleep(&ts, NULL);
    }
  }
}

int dpu_rank_main(run *r, int host) {
  dpu_state d;
  memset(&d, 0, sizeof d);
  check_settings(r, host);
  recv_test(&d, host);
  long np = r->net.nparams;
  long img = (long)r->net.in_c * r->net.in_h * r->net.in_w;
  int slots = r->o.prefetch + 1, next_slot = 0;
  size_t inmax = sizeof(msg_head) + sizeof(float) * (size_t)np;
  if (inmax < sizeof(msg_head) + (size_t)(r->local * img))
    inmax = sizeof(msg_head) + (size_t)(r->local * img);
  uint8_t *in = malloc(inmax);
  float **out = malloc(sizeof(float *) * slots);
  MPI_Request *sent = malloc(sizeof(MPI_Request) * slots);
  for (int s = 0; s < slots; ++s) {
    out[s] = malloc(sizeof(float) * (size_t)(r->local * img));
    sent[s] = MPI_REQUEST_NULL;
  }
  d.params = malloc(sizeof(float) * np);
  d.ws =
      malloc(sizeof(float) * dnnt_evaluate_workspace(&r->net, FEED_EVAL_BATCH));
  for (;;) {
    MPI_Status st;
    int flag = 0;
    MPI_Iprobe(host, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    if (!flag && d.val_active) {
      val_chunk(r, &d, host);
      continue;
    }
    if (!flag) {
      idle_wait(host, &st);
      continue;
    }
    int bytes;
    MPI_Get_count(&st, MPI_BYTE, &bytes);
    if ((size_t)bytes > inmax || (size_t)bytes < sizeof(msg_head))
      die("DPU rank: unexpected message of %d bytes (tag %d)", bytes,
          st.MPI_TAG);
    MPI_Recv(in, bytes, MPI_BYTE, host, st.MPI_TAG, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    msg_head h;
    memcpy(&h, in, sizeof h);
    if (st.MPI_TAG == TAG_STOP)
      break;
    if (st.MPI_TAG == TAG_VAL) {
      memcpy(d.params, in + sizeof h, sizeof(float) * (size_t)np);
      d.val_active = 1;
      d.val_next = 0;
      memset(&d.val, 0, sizeof d.val);
      continue;
    }
    if (h.n < 1 || h.n > r->local ||
        (size_t)bytes != sizeof h + (size_t)(h.n * img))
      die("DPU rank: a batch of %ld images in %d bytes (at most %d images "
          "of %ld bytes)",
          (long)h.n, bytes, r->local, img);
    int s = next_slot;
    next_slot = (next_slot + 1) % slots;
    MPI_Wait(&sent[s], MPI_STATUS_IGNORE);
    dnnk_augment_params p = r->aug;
    p.epoch = (uint32_t)h.epoch;
    dnnk_augment_batch(&p, in + sizeof h, DNNK_NCHW, h.n, r->net.in_c,
                       r->net.in_h, r->net.in_w, h.first, out[s]);
    MPI_Isend(out[s], (int)(h.n * img), MPI_FLOAT, host, TAG_AUG_OUT,
              MPI_COMM_WORLD, &sent[s]);
  }
  MPI_Waitall(slots, sent, MPI_STATUSES_IGNORE);
  return 0;
}
