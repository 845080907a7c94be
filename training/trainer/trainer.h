/* ompdpu-train: data-parallel training of a dnnt model over MPI, with the
 * next batches' augmentation and the validation on the host, offloaded to
 * the rank's DPU (OpenMP target regions) or done by an MPI rank on the DPU.
 * This header is what the trainer's files share. */
#ifndef TRAINER_H
#define TRAINER_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

#include "dnnt.h"
#include "dnnt_data.h"

/* Where augmentation and validation run. */
enum way { WAY_HOST = 0, WAY_OFFLOAD, WAY_MPI };

/* Command-line settings. */
typedef struct options {
  int way, dpu_role; /* dpu_role: this process is the MPI rank on a DPU */
  int worker; /* --way worker: offload, and the DPU trains part of each batch */
  const char *model; /* "cnn" (1x28x28) or "resnet" (3x32x32) */
  const char *data;  /* directory of the IDX files */
  int synthetic;     /* --dataset: 1 synthetic images, 0 Fashion-MNIST */
  int heavy;         /* --augment heavy: resized crop, rotation, colour */
  int epochs, stop_after, batch, prefetch, val_chunk, quiet, progress;
  long train_limit, test_limit; /* 0: the whole set */
  uint64_t seed;
  dnnt_sgd sgd;
  int pad, flip;
  const char *checkpoint, *json;
  int resume;
} options;

/* One epoch's figures, as printed and reported. */
typedef struct epoch_rec {
  int32_t epoch;
  int32_t has_test;
  double loss, train_acc, test_acc, test_loss, lr;
  double time, images_s;
  double t_compute, t_aug, t_val, t_allreduce; /* seconds of the host */
  double t_cpu; /* CPU seconds of the training thread */
  uint64_t hash;
} epoch_rec;

/* What every part of a run needs. */
typedef struct run {
  options o;
  int rank, ranks; /* among the host ranks */
  MPI_Comm hosts;  /* the host ranks (training, allreduce) */
  int dpu_rank;    /* WAY_MPI: the world rank of this host rank's DPU rank */
  dnnt_net net;
  dnnt_dataset train, test;
  long test_first, test_count; /* this rank's share of the test set */
  long steps_per_epoch;
  int local; /* images per rank per step */
  dnnk_augment_params aug, norm;
  int32_t *perm[2]; /* permutations of two epochs (prefetch crosses them) */
  int perm_epoch[2];
} run;

/* The rank's global step g: epoch and the images of its share. */
long step_epoch(const run *r, long g);
/* Dataset indices of this rank's images in step g (local of them). */
const int32_t *step_indices(run *r, long g);
/* Augmentation parameters of step g's epoch; first index of the rank. */
dnnk_augment_params step_params(const run *r, long g, long *first);
/* Collates step g's raw images into out (local x image bytes). */
void collate(run *r, long g, uint8_t *out);
/* Seconds on the monotonic clock. */
double now_s(void);
/* CPU seconds of the calling thread. */
double thread_cpu_s(void);
/* Prints a message from rank 0 (or any rank with all) to stderr. */
void note(const run *r, const char *fmt, ...);
/* Stops the whole job with a message. */
void die(const char *fmt, ...);

/* Hash of the settings that change what is trained (not the way). */
uint64_t run_config_hash(const run *r);
/* The same settings as "name value" pairs, for a checkpoint. */
void run_settings_text(const run *r, char *buf, size_t n);
/* Lists in out the settings of saved whose values differ in now, as
 * "--lr 0.02 (this run: 0.05)"; returns how many. */
int run_settings_differences(const char *saved, const char *now, char *out,
                             size_t n);

/* Supplies augmented batches and runs validations, one way or another. */
typedef struct feeder feeder;
/* Sets up the way for a run that starts at global step first_step. */
feeder *feeder_create(run *r, long first_step, long end_step);
/* The augmented floats of step g (waits for them); *stall gets the host's
 * waiting or augmenting seconds. */
const float *feeder_batch(feeder *f, long g, double *stall);
/* Starts validating params (epoch's weights); the host way finishes it. */
void feeder_validate(feeder *f, int epoch, const float *params);
/* 1 and the rank's result if the started validation has finished. */
int feeder_val_poll(feeder *f, dnnt_eval_result *res);
/* Waits for the started validation. */
dnnt_eval_result feeder_val_wait(feeder *f);
/* Host seconds spent issuing or doing validation work so far. */
double feeder_val_seconds(feeder *f);
/* Ends the way (stops the DPU rank, frees device buffers). */
void feeder_destroy(feeder *f);

/* 1 once the offload way's DPU died (the host took over). */
int feed_dpu_lost(void);

/* --way worker: trains step g's batch x, the DPU taking a share of the
 * images chosen from the measured speeds; gradients (of the global mean
 * loss) into grads; returns the mean loss, counts correct predictions. */
float worker_step(run *r, feeder *f, dnnt_trainer *tr, const float *params,
                  const float *x, const int32_t *labels, dnnt_batch_key key,
                  float *grads, long *correct);
/* Prints the DPU's share of the epoch's images and the two speeds. */
void worker_epoch_note(const run *r);

/* The DPU side of WAY_MPI: serves its host rank until told to stop. */
int dpu_rank_main(run *r, int host_world_rank);

/* Progress bar (a terminal) or nothing; the epoch line. */
void progress_step(const run *r, int epoch, long b, double loss, double acc,
                   double t0);
void progress_clear(const run *r);
void print_epoch(const run *r, const epoch_rec *e);
/* Writes the run's JSON report; final_hash: of the weights at the end. */
void write_json(const run *r, const epoch_rec *recs, int n, double total,
                uint64_t final_hash);

#endif
