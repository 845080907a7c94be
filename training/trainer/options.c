/* Command line of ompdpu-train. */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trainer.h"

static const char usage[] =
    "usage: ompdpu-train [--way host|offload|mpi|worker] [--model cnn|resnet]\n"
    "  [--data DIR] [--epochs N] [--batch N] [--lr X] [--momentum X]\n"
    "  [--wd X] [--schedule cosine|step|constant] [--warmup N] [--seed N]\n"
    "  [--dataset fashion|synthetic] [--augment light|heavy]\n"
    "  [--train-limit N] [--test-limit N] [--pad N] [--no-flip]\n"
    "  [--prefetch N] [--val-chunk N] [--checkpoint FILE] [--resume]\n"
    "  [--stop-after N] [--json FILE] [--quiet]\n"
    "Data parallel over MPI (mpirun -np P); --way mpi is an MPMD job with\n"
    "as many `--role dpu` ranks after the host ranks.\n";

/* The value after argv[*i], or a usage error. */
static const char *value(int argc, char **argv, int *i) {
  if (*i + 1 >= argc)
    die("%s needs a value\n%s", argv[*i], usage);
  return argv[++*i];
}

/* The integer after argv[*i], which must lie in [lo, hi]. */
static long long integer(int argc, char **argv, int *i, long long lo,
                         long long hi) {
  const char *name = argv[*i], *v = value(argc, argv, i);
  char *end;
  errno = 0;
  long long x = strtoll(v, &end, 10);
  if (end == v || *end || errno == ERANGE || x < lo || x > hi)
    die("%s %s: not a whole number from %lld to %lld", name, v, lo, hi);
  return x;
}

/* The real number after argv[*i], which must lie in [lo, hi]. */
static float real(int argc, char **argv, int *i, double lo, double hi) {
  const char *name = argv[*i], *v = value(argc, argv, i);
  char *end;
  double x = strtod(v, &end);
  if (end == v || *end || !isfinite(x) || x < lo || x > hi)
    die("%s %s: not a number from %g to %g", name, v, lo, hi);
  return (float)x;
}

/* The index of the word after argv[*i] among the words (one string,
   separated by '|'). */
static int choice(int argc, char **argv, int *i, const char *words) {
  const char *name = argv[*i], *v = value(argc, argv, i);
  int k = 0;
  for (const char *w = words; *w; ++k) {
    size_t n = strcspn(w, "|");
    if (strlen(v) == n && !strncmp(v, w, n))
      return k;
    w += n + (w[n] == '|');
  }
  die("%s must be one of %s, not '%s'", name, words, v);
  return -1;
}

/* Dies unless the file at path (if any) can be written: not a directory,
   and its directory takes a new file (checkpoints are written beside and
   renamed). Tried with a file, not access(): that passes anything for root,
   also read-only mounts and /proc. */
static void writable(const char *path, const char *option) {
  if (!path)
    return;
  struct stat st;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
    die("%s %s: is a directory", option, path);
  char *copy = strdup(path);
  const char *dir = dirname(copy);
  char probe[4096];
  snprintf(probe, sizeof probe, "%s/.ompdpu-train-XXXXXX", dir);
  int fd = mkstemp(probe);
  if (fd < 0)
    die("%s %s: cannot write in %s: %s", option, path, dir, strerror(errno));
  close(fd);
  unlink(probe);
  free(copy);
}

options parse_options(int argc, char **argv) {
  options o;
  memset(&o, 0, sizeof o);
  o.model = "cnn";
  o.data = getenv("DNNT_DATA") ? getenv("DNNT_DATA") : DNNT_FASHION_DIR;
  o.epochs = 15, o.batch = 64, o.prefetch = 3, o.val_chunk = 500;
  o.seed = 1, o.pad = 2, o.flip = 1, o.progress = 1, o.synthetic = -1;
  o.sgd.lr = 0.02f, o.sgd.momentum = 0.9f, o.sgd.weight_decay = 5e-4f;
  o.sgd.schedule = DNNT_LR_COSINE, o.sgd.gamma = 0.1f, o.sgd.step_epochs = 5;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    if (!strcmp(a, "--way")) {
      static const int ways[] = {WAY_HOST, WAY_OFFLOAD, WAY_MPI, WAY_OFFLOAD};
      int k = choice(argc, argv, &i, "host|offload|mpi|worker");
      o.way = ways[k];
      o.worker = k == 3;
    } else if (!strcmp(a, "--role"))
      o.dpu_role = choice(argc, argv, &i, "host|dpu");
    else if (!strcmp(a, "--model"))
      o.model = choice(argc, argv, &i, "cnn|resnet") ? "resnet" : "cnn";
    else if (!strcmp(a, "--dataset"))
      o.synthetic = choice(argc, argv, &i, "fashion|synthetic");
    else if (!strcmp(a, "--augment"))
      o.heavy = choice(argc, argv, &i, "light|heavy");
    else if (!strcmp(a, "--data"))
      o.data = value(argc, argv, &i);
    else if (!strcmp(a, "--epochs"))
      o.epochs = (int)integer(argc, argv, &i, 1, 100000);
    else if (!strcmp(a, "--stop-after"))
      o.stop_after = (int)integer(argc, argv, &i, 1, 100000);
    else if (!strcmp(a, "--batch"))
      o.batch = (int)integer(argc, argv, &i, 1, 1 << 20);
    else if (!strcmp(a, "--lr"))
      o.sgd.lr = real(argc, argv, &i, 1e-9, 10);
    else if (!strcmp(a, "--momentum"))
      o.sgd.momentum = real(argc, argv, &i, 0, 0.999999);
    else if (!strcmp(a, "--wd"))
      o.sgd.weight_decay = real(argc, argv, &i, 0, 1);
    else if (!strcmp(a, "--schedule")) {
      static const int kinds[] = {DNNT_LR_COSINE, DNNT_LR_STEP,
                                  DNNT_LR_CONSTANT};
      o.sgd.schedule = kinds[choice(argc, argv, &i, "cosine|step|constant")];
    } else if (!strcmp(a, "--warmup"))
      o.sgd.warmup_epochs = (int)integer(argc, argv, &i, 0, 100000);
    else if (!strcmp(a, "--seed"))
      o.seed = (uint64_t)integer(argc, argv, &i, 0, LLONG_MAX);
    else if (!strcmp(a, "--train-limit"))
      o.train_limit = (long)integer(argc, argv, &i, 1, LONG_MAX);
    else if (!strcmp(a, "--test-limit"))
      o.test_limit = (long)integer(argc, argv, &i, 1, LONG_MAX);
    else if (!strcmp(a, "--pad"))
      o.pad = (int)integer(argc, argv, &i, 0, 16);
    else if (!strcmp(a, "--no-flip"))
      o.flip = 0;
    else if (!strcmp(a, "--prefetch"))
      o.prefetch = (int)integer(argc, argv, &i, 1, 64);
    else if (!strcmp(a, "--val-chunk"))
      o.val_chunk = (int)integer(argc, argv, &i, 1, 1 << 20);
    else if (!strcmp(a, "--checkpoint"))
      o.checkpoint = value(argc, argv, &i);
    else if (!strcmp(a, "--resume"))
      o.resume = 1;
    else if (!strcmp(a, "--json"))
      o.json = value(argc, argv, &i);
    else if (!strcmp(a, "--quiet"))
      o.progress = 0;
    else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      fputs(usage, stdout);
      exit(0);
    } else
      die("unknown option '%s'\n%s", a, usage);
  }
  /* Each model's own data unless told: Fashion-MNIST for the CNN,
   * synthetic images for the ResNet. */
  if (o.synthetic < 0)
    o.synthetic = !strcmp(o.model, "resnet");
  if (o.resume && !o.checkpoint)
    die("--resume needs --checkpoint FILE");
  if (o.sgd.warmup_epochs > o.epochs)
    die("--warmup %d: more epochs than the run's %d", o.sgd.warmup_epochs,
        o.epochs);
  /* What the run is asked to write must be writable before it starts. */
  writable(o.checkpoint, "--checkpoint");
  writable(o.json, "--json");
  o.sgd.epochs = o.epochs;
  return o;
}
