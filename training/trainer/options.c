/* Command line of ompdpu-train. */
#include <stdlib.h>
#include <string.h>

#include "trainer.h"

static const char usage[] =
    "usage: ompdpu-train [--way host|offload|mpi|worker] [--model cnn|resnet]\n"
    "  [--data DIR] [--epochs N] [--batch N] [--lr X] [--momentum X]\n"
    "  [--wd X] [--schedule cosine|step|constant] [--warmup N] [--seed N]\n"
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

options parse_options(int argc, char **argv) {
  options o;
  memset(&o, 0, sizeof o);
  o.model = "cnn";
  o.data = getenv("DNNT_DATA") ? getenv("DNNT_DATA") : DNNT_FASHION_DIR;
  o.epochs = 15, o.batch = 64, o.prefetch = 3, o.val_chunk = 500;
  o.seed = 1, o.pad = 2, o.flip = 1, o.progress = 1;
  o.sgd.lr = 0.02f, o.sgd.momentum = 0.9f, o.sgd.weight_decay = 5e-4f;
  o.sgd.schedule = DNNT_LR_COSINE, o.sgd.gamma = 0.1f, o.sgd.step_epochs = 5;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    if (!strcmp(a, "--way")) {
      const char *v = value(argc, argv, &i);
      o.way = !strcmp(v, "host")      ? WAY_HOST
              : !strcmp(v, "offload") ? WAY_OFFLOAD
              : !strcmp(v, "mpi")     ? WAY_MPI
              : !strcmp(v, "worker")  ? WAY_OFFLOAD
                                      : -1;
      o.worker = !strcmp(v, "worker");
      if (o.way < 0)
        die("--way must be host, offload, mpi or worker, not '%s'", v);
    } else if (!strcmp(a, "--role"))
      o.dpu_role = !strcmp(value(argc, argv, &i), "dpu");
    else if (!strcmp(a, "--model"))
      o.model = value(argc, argv, &i);
    else if (!strcmp(a, "--data"))
      o.data = value(argc, argv, &i);
    else if (!strcmp(a, "--epochs"))
      o.epochs = atoi(value(argc, argv, &i));
    else if (!strcmp(a, "--stop-after"))
      o.stop_after = atoi(value(argc, argv, &i));
    else if (!strcmp(a, "--batch"))
      o.batch = atoi(value(argc, argv, &i));
    else if (!strcmp(a, "--lr"))
      o.sgd.lr = (float)atof(value(argc, argv, &i));
    else if (!strcmp(a, "--momentum"))
      o.sgd.momentum = (float)atof(value(argc, argv, &i));
    else if (!strcmp(a, "--wd"))
      o.sgd.weight_decay = (float)atof(value(argc, argv, &i));
    else if (!strcmp(a, "--schedule")) {
      const char *v = value(argc, argv, &i);
      o.sgd.schedule = !strcmp(v, "step")       ? DNNT_LR_STEP
                       : !strcmp(v, "constant") ? DNNT_LR_CONSTANT
                                                : DNNT_LR_COSINE;
    } else if (!strcmp(a, "--warmup"))
      o.sgd.warmup_epochs = atoi(value(argc, argv, &i));
    else if (!strcmp(a, "--seed"))
      o.seed = strtoull(value(argc, argv, &i), NULL, 0);
    else if (!strcmp(a, "--train-limit"))
      o.train_limit = atol(value(argc, argv, &i));
    else if (!strcmp(a, "--test-limit"))
      o.test_limit = atol(value(argc, argv, &i));
    else if (!strcmp(a, "--pad"))
      o.pad = atoi(value(argc, argv, &i));
    else if (!strcmp(a, "--no-flip"))
      o.flip = 0;
    else if (!strcmp(a, "--prefetch"))
      o.prefetch = atoi(value(argc, argv, &i));
    else if (!strcmp(a, "--val-chunk"))
      o.val_chunk = atoi(value(argc, argv, &i));
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
  if (o.epochs < 1 || o.batch < 1 || o.prefetch < 1 || o.val_chunk < 1)
    die("--epochs, --batch, --prefetch and --val-chunk must be positive");
  if (o.resume && !o.checkpoint)
    die("--resume needs --checkpoint FILE");
  o.sgd.epochs = o.epochs;
  return o;
}
