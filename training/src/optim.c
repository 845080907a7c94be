/* SGD with momentum and weight decay, and the learning-rate schedules. */
#include <math.h>

#include "dnnt.h"

float dnnt_lr_at(const dnnt_sgd *o, double epoch) {
  double lr = o->lr;
  if (o->schedule == DNNT_LR_STEP && o->step_epochs > 0)
    lr *= pow(o->gamma, floor(epoch / o->step_epochs));
  else if (o->schedule == DNNT_LR_COSINE && o->epochs > 0)
    lr *= 0.5 * (1.0 + cos(M_PI * fmin(epoch / o->epochs, 1.0)));
  if (o->warmup_epochs > 0 && epoch < o->warmup_epochs)
    lr *= 0.1 + 0.9 * epoch / o->warmup_epochs;
  return (float)lr;
}

void dnnt_sgd_step(const dnnt_sgd *o, float lr, float *w, float *v,
                   const float *g, long n) {
  float mu = o->momentum, wd = o->weight_decay;
#pragma omp parallel for simd schedule(static) if (n > 65536)
  for (long i = 0; i < n; ++i) {
    float d = g[i] + wd * w[i];
    v[i] = mu * v[i] + d;
    w[i] -= lr * v[i];
  }
}
