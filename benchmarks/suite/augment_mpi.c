/* Workload 1, way (c): the usual alternative to offloading, an MPI rank on
 * the DPU. Built twice from this file, as the two programs of an MPMD job:
 *
 *   mpirun -np 1 suite-augment-mpi-host ARGS : -np 1 suite-augment-mpi-dpu ARGS
 *
 * The host rank (rank 0) collates raw batch b+1, sends it to the DPU rank
 * (rank 1) and posts the receive of its augmented floats, then trains on
 * batch b; the DPU
 * rank receives raw batches, augments them and sends them back, with two
 * output buffers so that it can start on the next batch while the previous
 * one is still on its way. The same checksums as augment.c. */
#include <mpi.h>

#include "common.h"

#define TAG_RAW 1
#define TAG_AUG 2

#ifdef SUITE_ROLE_DPU

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  aug_opts o = aug_parse(argc, argv);
  long nraw = o.batch * AUG_IMG_BYTES, nout = nraw;
  uint8_t *raw = (uint8_t *)suite_alloc(nraw);
  float *out[2] = {(float *)suite_alloc(sizeof(float) * nout),
                   (float *)suite_alloc(sizeof(float) * nout)};
  MPI_Request sent[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  long total = o.warmup + o.batches;
  for (long i = 0; i < total; ++i) {
    /* Warm-up batches are numbered like the host numbers them. */
    long b = i < o.warmup ? i : i - o.warmup;
    int slot = (int)(i % 2);
    MPI_Recv(raw, (int)nraw, MPI_BYTE, 0, TAG_RAW, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    MPI_Wait(&sent[slot], MPI_STATUS_IGNORE);
    dnnk_augment_params p = aug_params(b, o.dataset / o.batch);
    dnnk_augment_batch(&p, raw, DNNK_NHWC, o.batch, AUG_C, AUG_H, AUG_W,
                       aug_first_index(&o, b), out[slot]);
    MPI_Isend(out[slot], (int)nout, MPI_FLOAT, 0, TAG_AUG, MPI_COMM_WORLD,
              &sent[slot]);
  }
  MPI_Waitall(2, sent, MPI_STATUSES_IGNORE);
  MPI_Finalize();
  return 0;
}

#else /* host rank */

/* Posts batch b: collates it into raw, sends the raw bytes, receives the
 * augmented floats into out. */
static void post(const aug_opts *o, const uint8_t *data, long b, uint8_t *raw,
                 float *out, MPI_Request req[2]) {
  long nraw = o->batch * AUG_IMG_BYTES;
  aug_collate(o, data, b, raw);
  MPI_Irecv(out, (int)nraw, MPI_FLOAT, 1, TAG_AUG, MPI_COMM_WORLD, &req[1]);
  MPI_Isend(raw, (int)nraw, MPI_BYTE, 1, TAG_RAW, MPI_COMM_WORLD, &req[0]);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2)
    suite_die("augment MPI baseline: run 1 host rank and 1 DPU rank");
  aug_opts o = aug_parse(argc, argv);
  uint8_t *data = (uint8_t *)suite_alloc(o.dataset * AUG_IMG_BYTES);
  aug_make_dataset(data, o.dataset);
  long nout = o.batch * AUG_IMG_BYTES;
  float *aug[2] = {(float *)suite_alloc(sizeof(float) * nout),
                   (float *)suite_alloc(sizeof(float) * nout)};
  uint8_t *raw[2] = {(uint8_t *)suite_alloc(nout), (uint8_t *)suite_alloc(nout)};
  aug_trainer tr;
  aug_trainer_init(&tr, o.batch, o.k, o.ks, o.stride, o.work);
  MPI_Request req[2][2];

  for (int b = 0; b < o.warmup; ++b) {
    post(&o, data, b, raw[0], aug[0], req[0]);
    MPI_Waitall(2, req[0], MPI_STATUSES_IGNORE);
  }

  uint64_t batch_hash = SUITE_FNV_INIT;
  double stall = 0.0, t0 = suite_now();
  post(&o, data, 0, raw[0], aug[0], req[0]);
  for (long b = 0; b < o.batches; ++b) {
    int slot = (int)(b % 2);
    double s0 = suite_now();
    if (b + 1 < o.batches)
      post(&o, data, b + 1, raw[1 - slot], aug[1 - slot], req[1 - slot]);
    MPI_Waitall(2, req[slot], MPI_STATUSES_IGNORE);
    stall += suite_now() - s0;
    batch_hash = suite_hash_words(batch_hash, aug[slot], sizeof(float) * nout);
    aug_train_step(&tr, aug[slot]);
  }
  double wall = suite_now() - t0;
  aug_report("mpi", &o, wall, stall, batch_hash, aug_trainer_hash(&tr));
  MPI_Finalize();
  return 0;
}

#endif
