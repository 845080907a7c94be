/* Checkpoint file: a fixed header, the arrays, the history, and an FNV
 * hash of everything before it, written to a temporary file and renamed. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dnnt_checkpoint.h"

#define MAGIC "DNNTCKP2"
/* Version 1 had no settings text; it is still read. */
#define MAGIC_V1 "DNNTCKP1"

typedef struct header {
  char magic[8];
  uint64_t net_hash, seed, config;
  int32_t epoch;
  uint32_t step;
  int64_t nparams;
  uint64_t history_size;
  char settings[DNNT_CHECKPOINT_SETTINGS];
} header;

/* The part of the header that version 1 wrote. */
#define HEADER_V1 offsetof(header, settings)

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = (const unsigned char *)p;
  for (size_t i = 0; i < n; ++i)
    h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}

/* Writes n bytes and folds them into the running hash. */
static int put(FILE *f, uint64_t *h, const void *p, size_t n) {
  *h = fnv(*h, p, n);
  return fwrite(p, 1, n, f) == n ? 0 : -1;
}

int dnnt_checkpoint_save(const char *path, const dnnt_checkpoint *c, char *err,
                         size_t errlen) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "wb");
  if (!f) {
    snprintf(err, errlen, "%s: cannot create: %s", tmp, strerror(errno));
    return -1;
  }
  header hd;
  memset(&hd, 0, sizeof hd);
  memcpy(hd.magic, MAGIC, 8);
  hd.net_hash = c->net_hash, hd.seed = c->seed, hd.config = c->config;
  hd.epoch = c->epoch, hd.step = c->step, hd.nparams = c->nparams;
  hd.history_size = c->history_size;
  snprintf(hd.settings, sizeof hd.settings, "%s", c->settings);
  uint64_t h = 0xcbf29ce484222325ull;
  size_t bytes = sizeof(float) * (size_t)c->nparams;
  int bad = put(f, &h, &hd, sizeof hd) || put(f, &h, c->params, bytes) ||
            put(f, &h, c->momentum, bytes) ||
            put(f, &h, c->history, c->history_size);
  bad = bad || fwrite(&h, sizeof h, 1, f) != 1 || fflush(f) || fsync(fileno(f));
  bad = fclose(f) || bad;
  if (bad || rename(tmp, path)) {
    snprintf(err, errlen, "%s: cannot write the checkpoint: %s", path,
             strerror(errno));
    unlink(tmp);
    return -1;
  }
  /* The rename itself must survive a crash: sync the directory. */
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", path);
  int fd = open(dirname(dir), O_RDONLY);
  if (fd >= 0) {
    fsync(fd);
    close(fd);
  }
  return 0;
}

int dnnt_checkpoint_load(const char *path, dnnt_checkpoint *c, char *err,
                         size_t errlen) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(err, errlen, "%s: cannot open the checkpoint: %s", path,
             strerror(errno));
    return -1;
  }
  struct stat st;
  if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
    snprintf(err, errlen, "%s: is a directory, not a checkpoint", path);
    fclose(f);
    return -1;
  }
  header hd;
  memset(&hd, 0, sizeof hd);
  uint64_t h = 0xcbf29ce484222325ull, stored = 0;
  size_t bytes = sizeof(float) * (size_t)c->nparams, head = 0;
  void *hist = NULL;
  const char *why = NULL;
  if (fread(&hd, HEADER_V1, 1, f) == 1) {
    if (!memcmp(hd.magic, MAGIC_V1, 8))
      head = HEADER_V1;
    else if (!memcmp(hd.magic, MAGIC, 8) &&
             fread(hd.settings, sizeof hd.settings, 1, f) == 1)
      head = sizeof hd;
  }
  if (!head)
    why = "not a dnnt checkpoint (bad magic or short header)";
  else if (hd.nparams != c->nparams || hd.net_hash != c->net_hash)
    why = "made for another network";
  else if (hd.history_size > (1u << 30))
    why = "corrupt header";
  else if (!(hist = malloc(hd.history_size ? hd.history_size : 1)))
    why = "out of memory";
  else if (fread(c->params, 1, bytes, f) != bytes ||
           fread(c->momentum, 1, bytes, f) != bytes ||
           fread(hist, 1, hd.history_size, f) != hd.history_size ||
           fread(&stored, sizeof stored, 1, f) != 1)
    why = "truncated";
  else if (fgetc(f) != EOF)
    why = "unexpected bytes after its checksum (corrupt)";
  if (!why) {
    h = fnv(h, &hd, head);
    h = fnv(h, c->params, bytes);
    h = fnv(h, c->momentum, bytes);
    h = fnv(h, hist, hd.history_size);
    if (h != stored)
      why = "checksum mismatch (corrupt)";
  }
  fclose(f);
  if (why) {
    snprintf(err, errlen, "%s: %s", path, why);
    free(hist);
    return -1;
  }
  hd.settings[sizeof hd.settings - 1] = 0;
  memcpy(c->settings, hd.settings, sizeof c->settings);
  c->seed = hd.seed, c->config = hd.config;
  c->epoch = hd.epoch, c->step = hd.step;
  c->history = hist;
  c->history_size = hd.history_size;
  return 0;
}
