/* The feeder's state, shared by the files of the three ways. */
#ifndef FEED_H
#define FEED_H

#include <stdatomic.h>

#include "trainer.h"

/* Most batches prepared ahead, plus the one in use. */
#define FEED_MAX_SLOTS 9
/* Batches augmented by one DPU region: each region costs the host's core
 * a few thread wake-ups, whatever its size. */
#define FEED_GROUP 4

/* Arguments of one augmentation, kept per slot: a deferred task maps them
 * after the call that issued it returned. */
typedef struct aug_args {
  dnnk_augment_params p;
  long first;
  int n, c, h, w;
} aug_args;

struct feeder {
  run *r;
  int slots;
  long end, issued; /* steps [issued, end) not yet started */
  long nraw, nout;  /* bytes of a raw batch, floats of an augmented one */
  long raw_stride, out_stride; /* slot to slot, in bytes and floats */
  uint8_t *raw_all;            /* the slots, one after the other */
  float *out_all;
  uint8_t *raw[FEED_MAX_SLOTS];
  float *out[FEED_MAX_SLOTS];
  int group;      /* steps per augmentation region, slots a multiple of it */
  aug_args *args; /* [slots] */
  atomic_long ready[FEED_MAX_SLOTS]; /* step whose floats are in the slot */
  double val_seconds;
  int val_running;
  dnnt_eval_result val_result;
  float *host_ws; /* evaluation scratch of the host */
  /* offload */
  int dev, val_token, nchunks;
  atomic_int val_done;
  dnnt_eval_result *chunk_res;
  dnnt_net *netc;
  const float *val_params;
  float *dev_ws;
  /* worker: the DPU's share of a step */
  float *gw;         /* its gradient */
  float grad_res[2]; /* its loss and correct count */
  atomic_int grad_done;
  double grad_t0, grad_t1; /* issue and completion times */
  int grad_mapped;
  /* mpi */
  MPI_Request sreq[FEED_MAX_SLOTS], rreq[FEED_MAX_SLOTS], val_req[2];
  uint8_t *msg[FEED_MAX_SLOTS];
  uint8_t *val_msg;
  double val_reply[3];
};

/* Evaluation batch: images per forward pass of the validation. */
#define FEED_EVAL_BATCH 100

/* Messages of the MPI way (host rank <-> DPU rank). */
enum { TAG_AUG = 11, TAG_AUG_OUT, TAG_VAL, TAG_VAL_OUT, TAG_STOP, TAG_TEST };
/* Bytes of the settings text a host rank sends its DPU rank first. */
#define FEED_SETTINGS_BYTES 512
/* The header in front of a raw batch (TAG_AUG) or weights (TAG_VAL). */
typedef struct msg_head {
  int64_t step, first;
  int32_t epoch, n;
} msg_head;

/* Augments one slot on the host (and the fallback of the offload). */
void feed_augment_host(feeder *f, int s);
/* Evaluates test images [first, first + count) of the rank on the host. */
dnnt_eval_result feed_eval_host(feeder *f, const float *params, long first,
                                long count);
/* Fills slot s's raw bytes and arguments for step g. */
void feed_prepare(feeder *f, long g, int s);

/* The ways' halves of the feeder API. */
void off_create(feeder *f);
/* Starts steps [g, g + n) in slots [s, s + n). */
void off_issue(feeder *f, int s, long g, int n);
void off_wait(feeder *f, int s, long g);
void off_validate(feeder *f, const float *params);
int off_val_poll(feeder *f);
void off_val_wait(feeder *f);
void off_destroy(feeder *f);
void off_grad_issue(feeder *f, const float *params, const float *x,
                    const int32_t *labels, int k, dnnt_batch_key key);
/* Waits for the DPU's share: 0, or -1 if the DPU was lost (not computed). */
int off_grad_wait(feeder *f);
void mpi_create(feeder *f);
void mpi_issue(feeder *f, int s, long g);
void mpi_wait(feeder *f, int s);
void mpi_validate(feeder *f, int epoch, const float *params);
int mpi_val_poll(feeder *f, int wait);
void mpi_destroy(feeder *f);

#endif
