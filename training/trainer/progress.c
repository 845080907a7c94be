/* What the trainer prints: a progress bar on a terminal (nothing when
 * stderr is not one), one line per epoch, and the JSON report. */
#include <errno.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trainer.h"

static double last_draw;
static int drawn;

void progress_step(const run *r, int epoch, long b, double loss, double acc,
                   double t0) {
  if (r->rank != 0 || !r->o.progress || !isatty(2))
    return;
  double t = now_s();
  long spe = r->steps_per_epoch;
  if (t - last_draw < 0.2 && b + 1 < spe)
    return;
  last_draw = t;
  int width = 30, full = (int)(width * (b + 1) / spe);
  char bar[64];
  for (int i = 0; i < width; ++i)
    bar[i] = i < full ? '#' : '.';
  bar[width] = 0;
  double ips = (double)(b + 1) * r->o.batch / (t - t0);
  fprintf(stderr, "\repoch %d/%d [%s] %ld/%ld loss %.4f acc %.2f%% %.0f img/s ",
          epoch + 1, r->o.epochs, bar, b + 1, spe, loss, 100.0 * acc, ips);
  fflush(stderr);
  drawn = 1;
}

void progress_clear(const run *r) {
  if (r->rank != 0 || !drawn)
    return;
  fprintf(stderr, "\r%*s\r", 100, "");
  fflush(stderr);
  drawn = 0;
}

void print_epoch(const run *r, const epoch_rec *e) {
  if (r->rank != 0)
    return;
  printf("epoch %2d/%d  loss %.4f  train %.2f%%  test %.2f%% (loss %.4f)  "
         "time %.1f s  %.0f img/s  lr %.5f  aug %.2f s  val %.2f s  "
         "hash %016llx\n",
         e->epoch, r->o.epochs, e->loss, 100.0 * e->train_acc,
         100.0 * e->test_acc, e->test_loss, e->time, e->images_s, e->lr,
         e->t_aug, e->t_val, (unsigned long long)e->hash);
  fflush(stdout);
}

void write_json(const run *r, const epoch_rec *recs, int n, double total,
                uint64_t final_hash) {
  FILE *f = fopen(r->o.json, "w");
  if (!f)
    die("--json %s: cannot write: %s", r->o.json, strerror(errno));
  const char *ways[] = {"host", "offload", "mpi"};
  fprintf(f,
          "{\"way\": \"%s\", \"model\": \"%s\", \"ranks\": %d, \"threads\": "
          "\"%d\", \"batch\": %d, \"epochs\": %d, \"seed\": %llu, "
          "\"train_images\": %ld, \"test_images\": %ld, \"total_s\": %.3f, "
          "\"final_hash\": \"%016llx\",\n \"epoch_records\": [\n",
          r->o.worker ? "worker" : ways[r->o.way], r->o.model, r->ranks,
          omp_get_max_threads(), r->o.batch, r->o.epochs,
          (unsigned long long)r->o.seed, r->train.count, r->test.count, total,
          (unsigned long long)final_hash);
  for (int i = 0; i < n; ++i) {
    const epoch_rec *e = &recs[i];
    fprintf(f,
            "  {\"epoch\": %d, \"loss\": %.6f, \"train_acc\": %.6f, "
            "\"test_acc\": %.6f, \"test_loss\": %.6f, \"lr\": %.6f, "
            "\"time_s\": %.4f, \"images_s\": %.2f, \"compute_s\": %.4f, "
            "\"aug_s\": %.4f, \"val_s\": %.4f, \"allreduce_s\": %.4f, "
            "\"cpu_s\": %.4f, "
            "\"hash\": \"%016llx\"}%s\n",
            e->epoch, e->loss, e->train_acc, e->test_acc, e->test_loss, e->lr,
            e->time, e->images_s, e->t_compute, e->t_aug, e->t_val,
            e->t_allreduce, e->t_cpu, (unsigned long long)e->hash,
            i + 1 < n ? "," : "");
  }
  fprintf(f, " ]}\n");
  if (ferror(f) | fclose(f))
    die("--json %s: cannot write: %s", r->o.json, strerror(errno));
}
