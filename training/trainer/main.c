/* ompdpu-train: sets up the run (MPI ranks, data, model, resume), then
 * trains epoch by epoch; the way decides where augmentation and
 * validation happen (feed_*.c). */
#include <malloc.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dnnt_checkpoint.h"
#include "trainer.h"

options parse_options(int argc, char **argv);
void train_loop(run *r, epoch_rec *recs, int *nrecs, float *params, float *mom,
                int first_epoch);

/* Loads the data: synthetic images of the model's input shape, or
 * Fashion-MNIST (fitted to the ResNet's 3x32x32 input: upscaled, grey in
 * every channel). */
static void load_data(run *r) {
  char err[1024];
  const dnnt_net *n = &r->net;
  if (r->o.synthetic) {
    if (dnnt_synthetic(r->o.train_limit ? r->o.train_limit : 10000, n->in_c,
                       n->in_h, n->in_w, 10, r->o.seed, &r->train) ||
        dnnt_synthetic(r->o.test_limit ? r->o.test_limit : 2000, n->in_c,
                       n->in_h, n->in_w, 10, r->o.seed, &r->test))
      die("cannot allocate the synthetic images");
    return;
  }
  if (dnnt_load_fashion(r->o.data, "train", &r->train, err, sizeof err) ||
      dnnt_load_fashion(r->o.data, "t10k", &r->test, err, sizeof err))
    die("%s", err);
  if (r->test.c != r->train.c || r->test.h != r->train.h ||
      r->test.w != r->train.w)
    die("%s/t10k-images-idx3-ubyte.gz: images of %dx%d, the training "
        "set's are %dx%d",
        r->o.data, r->test.h, r->test.w, r->train.h, r->train.w);
  dnnt_dataset_truncate(&r->train, r->o.train_limit);
  dnnt_dataset_truncate(&r->test, r->o.test_limit);
  if (!strcmp(r->o.model, "resnet") && r->train.c == 1 &&
      r->train.h <= n->in_h && r->train.w <= n->in_w) {
    note(r,
         "ompdpu-train: Fashion-MNIST's %dx%d grey images upscaled to "
         "the resnet model's %dx%dx%d input\n",
         r->train.h, r->train.w, n->in_c, n->in_h, n->in_w);
    if (dnnt_dataset_fit(&r->train, n->in_c, n->in_h, n->in_w) ||
        dnnt_dataset_fit(&r->test, n->in_c, n->in_h, n->in_w))
      die("cannot allocate the upscaled images");
  }
  if (r->train.c != r->net.in_c || r->train.h != r->net.in_h ||
      r->train.w != r->net.in_w)
    die("%s/train-images-idx3-ubyte.gz: images of %d channel%s of %dx%d, the "
        "%s model takes %d of %dx%d",
        r->o.data, r->train.c, r->train.c == 1 ? "" : "s", r->train.h,
        r->train.w, r->o.model, r->net.in_c, r->net.in_h, r->net.in_w);
}

/* Augmentation (light: random crop with padding, flip; heavy: as
 * torchvision's RandomResizedCrop, RandomRotation, RandomHorizontalFlip and
 * ColorJitter, with a colour cast per channel) and the normalisation alone
 * for validation. Fashion-MNIST's mean and std. */
static void set_augmentation(run *r) {
  const dnnt_net *n = &r->net;
  dnnk_augment_defaults(&r->norm, n->in_h, n->in_w);
  for (int c = 0; c < n->in_c; ++c) {
    r->norm.mean[c] = 0.2860f;
    r->norm.std[c] = 0.3530f;
  }
  r->norm.seed = r->o.seed;
  r->aug = r->norm;
  r->aug.flip = r->o.flip;
  if (!r->o.heavy) {
    r->aug.pad = r->o.pad;
    return;
  }
  dnnk_augment_params *a = &r->aug;
  a->scale[0] = 0.35f, a->scale[1] = 1.0f;
  a->ratio[0] = 0.75f, a->ratio[1] = 4.0f / 3.0f;
  a->degrees[0] = -15.0f, a->degrees[1] = 15.0f;
  a->brightness = 0.2f, a->contrast = 0.2f, a->color = 0.2f;
  a->saturation[0] = -0.4f, a->saturation[1] = 0.4f;
}

/* World layout: host ranks first; WAY_MPI adds as many DPU ranks. */
static void split_ranks(run *r) {
  int world, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &world);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_split(MPI_COMM_WORLD, r->o.dpu_role, world, &r->hosts);
  MPI_Comm_rank(r->hosts, &r->rank);
  MPI_Comm_size(r->hosts, &r->ranks);
  if (r->o.way == WAY_MPI) {
    if (size % 2)
      die("--way mpi needs as many DPU ranks as host ranks (MPMD: mpirun "
          "-np P ompdpu-train --way mpi : -np P ompdpu-train --way mpi "
          "--role dpu)");
    r->dpu_rank = r->o.dpu_role ? r->rank : size / 2 + r->rank;
  }
}

/* Epoch records follow each other: a history of another record layout
 * does not divide into them or misnumbers them. */
static int history_fits(size_t bytes, const epoch_rec *recs, int n) {
  if (bytes % sizeof(epoch_rec) || (n && recs[0].epoch < 1))
    return 0;
  for (int i = 1; i < n; ++i)
    if (recs[i].epoch != recs[0].epoch + i)
      return 0;
  return 1;
}

int main(int argc, char **argv) {
  /* dnnk's GEMM mallocs its packing buffers per call: kept in the heap
   * instead of fresh mmaps, they cost no page faults (and no trip through
   * Open MPI's munmap hooks, which made every call slower). */
  mallopt(M_MMAP_THRESHOLD, 512 << 20);
  mallopt(M_TRIM_THRESHOLD, 1024 << 20);
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  static run r;
  r.o = parse_options(argc, argv);
  if (r.o.dpu_role && r.o.way != WAY_MPI)
    die("--role dpu is the DPU side of --way mpi (MPMD: mpirun -np P "
        "ompdpu-train --way mpi : -np P ompdpu-train --way mpi --role dpu)");
  split_ranks(&r);
  if (!strcmp(r.o.model, "resnet"))
    dnnt_small_resnet(&r.net, 10);
  else
    dnnt_reference_cnn(&r.net);
  char err[1024];
  if (dnnt_net_check(&r.net, err, sizeof err))
    die("model: %s", err);
  if (r.o.batch % r.ranks)
    die("--batch %d is not a multiple of the %d ranks", r.o.batch, r.ranks);
  r.local = r.o.batch / r.ranks;
  if (!r.o.dpu_role)
    load_data(&r);
  set_augmentation(&r);
  if (r.o.dpu_role) {
    int rc = dpu_rank_main(&r, r.rank);
    MPI_Finalize();
    return rc;
  }
  r.steps_per_epoch = r.train.count / r.o.batch;
  if (r.steps_per_epoch < 1)
    die("%ld training images: fewer than one batch", r.train.count);
  r.test_first = r.test.count * r.rank / r.ranks;
  r.test_count = r.test.count * (r.rank + 1) / r.ranks - r.test_first;

  long np = r.net.nparams;
  float *params = malloc(sizeof(float) * np), *mom = calloc(np, sizeof(float));
  epoch_rec *recs = calloc((size_t)r.o.epochs, sizeof(epoch_rec));
  if (!params || !mom || !recs)
    die("cannot allocate %ld parameters and %d epoch records", np, r.o.epochs);
  int nrecs = 0, first_epoch = 0;
  dnnt_init_params(&r.net, r.o.seed, params);
  if (r.o.resume) {
    dnnt_checkpoint c = {0};
    c.net_hash = dnnt_hash((const float *)&r.net, sizeof r.net / 4);
    c.nparams = np, c.params = params, c.momentum = mom;
    if (dnnt_checkpoint_load(r.o.checkpoint, &c, err, sizeof err))
      die("--resume: %s", err);
    if (c.config != run_config_hash(&r) || c.seed != r.o.seed) {
      char now[DNNT_CHECKPOINT_SETTINGS], diff[1024];
      run_settings_text(&r, now, sizeof now);
      if (run_settings_differences(c.settings, now, diff, sizeof diff))
        die("--resume: %s was written with other settings: %s", r.o.checkpoint,
            diff);
      die("--resume: %s was written with other settings (seed, epochs, "
          "batch, learning rate, data or ranks)",
          r.o.checkpoint);
    }
    first_epoch = c.epoch;
    nrecs = (int)(c.history_size / sizeof(epoch_rec));
    if (nrecs > r.o.epochs)
      nrecs = r.o.epochs;
    memcpy(recs, c.history, (size_t)nrecs * sizeof(epoch_rec));
    free(c.history);
    if (!history_fits(c.history_size, recs, nrecs)) {
      if (c.epoch < r.o.epochs)
        note(&r,
             "ompdpu-train: warning: --resume: the epoch records in %s are "
             "of another ompdpu-train version: the weights resume, the "
             "report starts at epoch %d\n",
             r.o.checkpoint, c.epoch + 1);
      else
        note(&r,
             "ompdpu-train: warning: --resume: the epoch records in %s are "
             "of another ompdpu-train version, and its %d epochs are done: "
             "no report but the weights' hash\n",
             r.o.checkpoint, c.epoch);
      nrecs = 0;
    }
    note(&r, "resumed from %s after epoch %d (step %u)\n", r.o.checkpoint,
         first_epoch, c.step);
  }
  const char *ways[] = {"host", "offload", "mpi"};
  note(&r,
       "ompdpu-train: %s model (%ld parameters), %ld training / %ld test "
       "%s images, %s augmentation, way %s, %d rank%s x %d thread%s, batch "
       "%d, %d epochs\n",
       r.o.model, np, r.train.count, r.test.count,
       r.o.synthetic ? "synthetic" : "Fashion-MNIST",
       r.o.heavy ? "heavy" : "light", r.o.worker ? "worker" : ways[r.o.way],
       r.ranks, r.ranks > 1 ? "s" : "", omp_get_max_threads(),
       omp_get_max_threads() > 1 ? "s" : "", r.o.batch, r.o.epochs);
  double t0 = now_s();
  if (first_epoch < r.o.epochs)
    train_loop(&r, recs, &nrecs, params, mom, first_epoch);
  double total = now_s() - t0;
  if (r.rank == 0) {
    unsigned long long hash = dnnt_hash(params, np);
    if (nrecs)
      printf("final: test accuracy %.2f%%, weight hash %016llx, %.1f s\n",
             100.0 * recs[nrecs - 1].test_acc, hash, total);
    else
      printf("final: no epoch records (resumed after the last epoch), weight "
             "hash %016llx, %.1f s\n",
             hash, total);
    fflush(stdout);
    if (r.o.json)
      write_json(&r, recs, nrecs, total, hash);
  }
  MPI_Finalize();
  if (r.o.way == WAY_OFFLOAD && feed_dpu_lost()) {
    /* Helper threads parked after the DPU died would hold up libomp's and
     * libomptarget's teardown: leave now, all output written. */
    fflush(NULL);
    _exit(0);
  }
  return 0;
}
