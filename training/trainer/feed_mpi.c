/* The MPI way, host side: the usual alternative to offloading. The host
 * rank sends each batch ahead (raw bytes) to its MPI rank on the DPU and
 * posts the receive of the augmented floats; at each epoch's end it sends
 * the weights, and the DPU rank answers with the validation's counts. */
#include <stdlib.h>
#include <string.h>

#include "feed.h"

void mpi_create(feeder *f) {
  run *r = f->r;
  for (int s = 0; s < f->slots; ++s) {
    f->msg[s] = malloc(sizeof(msg_head) + (size_t)f->nraw);
    f->sreq[s] = f->rreq[s] = MPI_REQUEST_NULL;
  }
  f->val_req[0] = f->val_req[1] = MPI_REQUEST_NULL;
  f->val_msg = malloc(sizeof(msg_head) + sizeof(float) * r->net.nparams);
  /* Its settings, which the DPU rank compares with its own. */
  char text[FEED_SETTINGS_BYTES] = {0};
  run_settings_text(r, text, sizeof text);
  MPI_Send(text, (int)sizeof text, MPI_CHAR, r->dpu_rank, TAG_TEST,
           MPI_COMM_WORLD);
  /* The rank's share of the test set, once. */
  long img = (long)r->test.c * r->test.h * r->test.w;
  int64_t head[4] = {r->test_count, r->test.c, r->test.h, r->test.w};
  MPI_Send(head, 4, MPI_INT64_T, r->dpu_rank, TAG_TEST, MPI_COMM_WORLD);
  MPI_Send(r->test.images + r->test_first * img, (int)(r->test_count * img),
           MPI_BYTE, r->dpu_rank, TAG_TEST, MPI_COMM_WORLD);
  MPI_Send(r->test.labels + r->test_first, (int)r->test_count, MPI_INT32_T,
           r->dpu_rank, TAG_TEST, MPI_COMM_WORLD);
}

void mpi_issue(feeder *f, int s, long g) {
  run *r = f->r;
  feed_prepare(f, g, s);
  MPI_Wait(&f->sreq[s], MPI_STATUS_IGNORE);
  msg_head h = {g, f->args[s].first, (int32_t)f->args[s].p.epoch, r->local};
  memcpy(f->msg[s], &h, sizeof h);
  memcpy(f->msg[s] + sizeof h, f->raw[s], (size_t)f->nraw);
  MPI_Irecv(f->out[s], (int)f->nout, MPI_FLOAT, r->dpu_rank, TAG_AUG_OUT,
            MPI_COMM_WORLD, &f->rreq[s]);
  MPI_Isend(f->msg[s], (int)(sizeof h + f->nraw), MPI_BYTE, r->dpu_rank,
            TAG_AUG, MPI_COMM_WORLD, &f->sreq[s]);
}

void mpi_wait(feeder *f, int s) { MPI_Wait(&f->rreq[s], MPI_STATUS_IGNORE); }

void mpi_validate(feeder *f, int epoch, const float *params) {
  run *r = f->r;
  MPI_Wait(&f->val_req[0], MPI_STATUS_IGNORE);
  msg_head h = {0, 0, epoch, 0};
  size_t bytes = sizeof(float) * (size_t)r->net.nparams;
  memcpy(f->val_msg, &h, sizeof h);
  memcpy(f->val_msg + sizeof h, params, bytes);
  MPI_Irecv(f->val_reply, 3, MPI_DOUBLE, r->dpu_rank, TAG_VAL_OUT,
            MPI_COMM_WORLD, &f->val_req[1]);
  MPI_Isend(f->val_msg, (int)(sizeof h + bytes), MPI_BYTE, r->dpu_rank, TAG_VAL,
            MPI_COMM_WORLD, &f->val_req[0]);
}

int mpi_val_poll(feeder *f, int wait) {
  int done = 1;
  if (wait)
    MPI_Wait(&f->val_req[1], MPI_STATUS_IGNORE);
  else
    MPI_Test(&f->val_req[1], &done, MPI_STATUS_IGNORE);
  if (done) {
    f->val_result.correct = (long)f->val_reply[0];
    f->val_result.count = (long)f->val_reply[1];
    f->val_result.loss_sum = f->val_reply[2];
  }
  return done;
}

void mpi_destroy(feeder *f) {
  msg_head h = {0, 0, 0, 0};
  MPI_Waitall(f->slots, f->rreq, MPI_STATUSES_IGNORE);
  MPI_Waitall(2, f->val_req, MPI_STATUSES_IGNORE);
  MPI_Send(&h, (int)sizeof h, MPI_BYTE, f->r->dpu_rank, TAG_STOP,
           MPI_COMM_WORLD);
  MPI_Waitall(f->slots, f->sreq, MPI_STATUSES_IGNORE);
  for (int s = 0; s < f->slots; ++s)
    free(f->msg[s]);
  free(f->val_msg);
}
