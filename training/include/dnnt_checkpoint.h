/* Checkpoints of a training run: weights, optimizer state, the position of
 * the counter-based RNG (seed, epoch, step) and the caller's history, in
 * one file replaced atomically (write, fsync, rename). */
#ifndef DNNT_CHECKPOINT_H
#define DNNT_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of settings text a checkpoint keeps, with its NUL. */
#define DNNT_CHECKPOINT_SETTINGS 256

/* What a checkpoint holds; the arrays belong to the caller. */
typedef struct dnnt_checkpoint {
  uint64_t net_hash; /* of the network's layer list: refuses another model */
  uint64_t seed;     /* the run's seed: all draws follow from it */
  uint64_t config;   /* hash of the settings that change the run */
  /* Those settings as "name value" pairs, to say which differ on resume
   * ("" from checkpoints of version 1). */
  char settings[DNNT_CHECKPOINT_SETTINGS];
  int32_t epoch; /* epochs completed */
  uint32_t step; /* global steps completed */
  long nparams;
  float *params, *momentum;
  void *history;       /* opaque bytes of the caller (epoch records) */
  size_t history_size; /* on load: bytes malloc'ed into history */
} dnnt_checkpoint;

/* Writes c to path atomically (path.tmp, fsync, rename, fsync of the
 * directory); 0 or -1 with err. */
int dnnt_checkpoint_save(const char *path, const dnnt_checkpoint *c, char *err,
                         size_t errlen);
/* Reads path into c: params and momentum must hold c->nparams floats (it is
 * checked against the file); history is malloc'ed. 0 or -1 with err. */
int dnnt_checkpoint_load(const char *path, dnnt_checkpoint *c, char *err,
                         size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
