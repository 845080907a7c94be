/* The settings that change what is trained (not the way): their hash,
 * which a checkpoint keeps, and their text, which names what differs when
 * --resume meets a checkpoint of another run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trainer.h"

uint64_t run_config_hash(const run *r) {
  const options *o = &r->o;
  long vals[] = {o->epochs,      o->batch,        (long)o->seed,
                 o->train_limit, o->pad,          o->flip,
                 r->ranks,       o->sgd.schedule, o->sgd.warmup_epochs};
  float fl[] = {o->sgd.lr, o->sgd.momentum, o->sgd.weight_decay};
  uint64_t h = dnnt_hash((const float *)vals, (long)(sizeof vals / 4));
  /* Zero for the light augmentation on the model's own data: checkpoints
   * of runs before these options still resume. */
  uint64_t data = (uint64_t)o->heavy * 0x9e3779b97f4a7c15ull ^
                  (uint64_t)(o->synthetic != !strcmp(o->model, "resnet")) *
                      0xc2b2ae3d27d4eb4full;
  return h ^ (dnnt_hash(fl, 3) * 31) ^ (uint64_t)strlen(o->model) ^ data;
}

/* The shortest text that reads back as v (0.02, not 0.0199999996). */
static const char *float_text(float v, char buf[24]) {
  for (int digits = 6; digits < 9; ++digits) {
    snprintf(buf, 24, "%.*g", digits, (double)v);
    if (strtof(buf, NULL) == v)
      return buf;
  }
  snprintf(buf, 24, "%.9g", (double)v);
  return buf;
}

void run_settings_text(const run *r, char *buf, size_t n) {
  const options *o = &r->o;
  char lr[24], momentum[24], wd[24];
  static const char *schedules[] = {"constant", "step", "cosine"};
  int s = o->sgd.schedule;
  snprintf(buf, n,
           "--epochs %d --batch %d --seed %llu --train-limit %ld --pad %d "
           "flip %s ranks %d --schedule %s --warmup %d --lr %s "
           "--momentum %s --wd %s --model %s --dataset %s --augment %s",
           o->epochs, o->batch, (unsigned long long)o->seed, o->train_limit,
           o->pad, o->flip ? "yes" : "no", r->ranks,
           s >= 0 && s < 3 ? schedules[s] : "?", o->sgd.warmup_epochs,
           float_text(o->sgd.lr, lr), float_text(o->sgd.momentum, momentum),
           float_text(o->sgd.weight_decay, wd), o->model,
           o->synthetic ? "synthetic" : "fashion",
           o->heavy ? "heavy" : "light");
}

/* Splits the next "name value" pair off *text; 0 at its end. */
static int next_pair(const char **text, char name[32], char value[48]) {
  int used = 0;
  if (sscanf(*text, " %31s %47s%n", name, value, &used) != 2)
    return 0;
  *text += used;
  return 1;
}

int run_settings_differences(const char *saved, const char *now, char *out,
                             size_t n) {
  char sname[32], sval[48], nname[32], nval[48];
  size_t len = 0;
  int found = 0;
  out[0] = 0;
  while (next_pair(&saved, sname, sval)) {
    const char *scan = now;
    while (next_pair(&scan, nname, nval) && strcmp(sname, nname))
      ;
    if (strcmp(sname, nname) || !strcmp(sval, nval))
      continue;
    int w = snprintf(out + len, n - len, "%s%s %s (this run: %s)",
                     found ? ", " : "", sname, sval, nval);
    if (w < 0 || (size_t)w >= n - len)
      break;
    len += (size_t)w;
    ++found;
  }
  return found;
}
