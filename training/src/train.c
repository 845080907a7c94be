/* Training passes: forward keeping every activation, backward layer by
 * layer from the loss, reporting each layer's finished parameter gradients
 * so that their allreduce overlaps the rest of the backward pass. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Device code too: the worker way trains part of each batch on the DPU. */
#pragma omp declare target

/* Input values per image of layer i. */
static long in_size(const dnnt_layer *l) { return (long)l->c * l->h * l->w; }

static float *falloc(long count) {
  void *p = NULL;
  if (posix_memalign(&p, 64, sizeof(float) * (size_t)(count > 0 ? count : 1)))
    return NULL;
  return (float *)p;
}

int dnnt_trainer_init(dnnt_trainer *t, const dnnt_net *net, int n) {
  memset(t, 0, sizeof *t);
  t->net = net;
  t->n = n;
  int L = net->nlayers, ok = 1;
  for (int i = 0; i <= L; ++i) {
    long size = (long)n * (i < L ? in_size(&net->layer[i]) : dnnt_classes(net));
    ok &= (t->act[i] = falloc(size)) != NULL;
    ok &= (t->grad[i] = falloc(size)) != NULL;
  }
  for (int i = 0; i < L; ++i) {
    const dnnt_layer *l = &net->layer[i];
    if (l->kind == DNNT_MAXPOOL)
      ok &=
          (t->argmax[i] = (int32_t *)falloc(n * dnnt_out_size(net, i))) != NULL;
    if (l->kind == DNNT_DROPOUT)
      ok &= (t->mask[i] = falloc(n * in_size(l))) != NULL;
  }
  ok &= (t->prob = falloc((long)n * dnnt_classes(net))) != NULL;
  ok &= (t->ws = falloc(dnnt_conv_ws(net, n))) != NULL;
  long wmax = 0;
  for (int i = 0; i < L; ++i)
    if (net->layer[i].kind == DNNT_CONV &&
        net->layer[i].wcount + net->layer[i].bcount > wmax)
      wmax = net->layer[i].wcount + net->layer[i].bcount;
  ok &= (t->wscratch = falloc(wmax)) != NULL;
  if (!ok) {
    dnnt_trainer_free(t);
    return -1;
  }
  return 0;
}

void dnnt_trainer_free(dnnt_trainer *t) {
  for (int i = 0; i <= DNNT_MAX_LAYERS; ++i) {
    free(t->act[i]);
    free(t->grad[i]);
    if (i < DNNT_MAX_LAYERS) {
      free(t->argmax[i]);
      free(t->mask[i]);
    }
  }
  free(t->prob);
  free(t->ws);
  free(t->wscratch);
  memset(t, 0, sizeof *t);
}

/* Inverted dropout of layer i: y = x * mask, mask drawn per (seed, step,
 * global image, unit), so any split of the batch draws the same masks. */
static void dropout_forward(const dnnt_layer *l, int i, float *mask,
                            const float *x, float *y, int n,
                            dnnt_batch_key key) {
  long units = in_size(l);
  float keep = 1.0f / (1.0f - l->rate);
  uint64_t seed = key.seed + 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);
  uint32_t threshold = (uint32_t)((double)l->rate * 4294967296.0);
  for (int b = 0; b < n; ++b)
    for (long j = 0; j < units; j += 4) {
      uint32_t ctr[4] = {key.step, (uint32_t)(j / 4),
                         (uint32_t)(key.first_image + b), 0x64726f70u};
      uint32_t r[4];
      dnnk_philox_block(ctr, seed, r);
      for (long q = j; q < j + 4 && q < units; ++q) {
        long at = (long)b * units + q;
        mask[at] = r[q - j] >= threshold ? keep : 0.0f;
        y[at] = x[at] * mask[at];
      }
    }
}

float dnnt_forward_train(dnnt_trainer *t, const float *params, const float *x,
                         const int32_t *labels, int n, dnnt_batch_key key,
                         long *correct) {
  const dnnt_net *net = t->net;
  int L = net->nlayers, cls = dnnt_classes(net);
  memcpy(t->act[0], x, sizeof(float) * (size_t)(n * in_size(&net->layer[0])));
  for (int i = 0; i < L; ++i) {
    const dnnt_layer *l = &net->layer[i];
    float *in = t->act[i], *out = t->act[i + 1];
    if (l->kind == DNNT_DROPOUT)
      dropout_forward(l, i, t->mask[i], in, out, n, key);
    else if (l->kind == DNNT_SKIP)
      memcpy(out, in, sizeof(float) * (size_t)(n * in_size(l)));
    else
      dnnt_layer_forward(net, i, params, in, out, n, t->ws,
                         l->kind == DNNT_ADD ? t->act[l->skip] : NULL,
                         t->argmax[i]);
  }
  float loss = dnnk_softmax_xent_forward(t->act[L], labels, n, cls, t->prob);
  long ok = 0;
  for (int b = 0; b < n; ++b) {
    const float *row = t->act[L] + (long)b * cls;
    int best = 0;
    for (int k = 1; k < cls; ++k)
      best = row[k] > row[best] ? k : best;
    ok += best == labels[b];
  }
  if (correct)
    *correct = ok;
  return loss;
}

/* Gradient wrt the input of layer i (skipped for the first layer: nothing
 * needs the input's gradient). */
static void layer_backward(dnnt_trainer *t, int i, const float *params, int n,
                           float *grads, dnnt_grad_ready_fn ready, void *ctx) {
  const dnnt_layer *l = &t->net->layer[i];
  const float *dy = t->grad[i + 1];
  float *dx = t->grad[i];
  long count = n * in_size(l);
  switch (l->kind) {
  case DNNT_CONV: {
    int chunk = dnnt_conv_chunk(l, n);
    long xs = (long)l->c * l->h * l->w, ys = (long)l->oc * l->oh * l->ow;
    long np = l->wcount + l->bcount;
    for (int s = 0; s < n; s += chunk) {
      dnnk_conv_desc d = dnnt_conv_of(l, n - s < chunk ? n - s : chunk);
      /* The first chunk writes the gradient, later ones add to it. */
      float *dw = s == 0 ? grads + l->woff : t->wscratch;
      dnnk_conv2d_backward_weights(&d, t->act[i] + s * xs, dy + s * ys, dw,
                                   dw + l->wcount, t->ws);
      if (s > 0)
        for (long j = 0; j < np; ++j)
          grads[l->woff + j] += dw[j];
    }
    ready(ctx, i);
    for (int s = 0; s < n && i > 0; s += chunk) {
      dnnk_conv_desc d = dnnt_conv_of(l, n - s < chunk ? n - s : chunk);
      dnnk_conv2d_backward_data(&d, dy + s * ys, params + l->woff, dx + s * xs,
                                t->ws);
    }
    break;
  }
  case DNNT_FC:
    dnnk_fc_backward(t->act[i], params + l->woff, dy, n, (int)in_size(l), l->oc,
                     NULL, grads + l->woff, grads + l->boff);
    ready(ctx, i);
    if (i > 0)
      dnnk_fc_backward(t->act[i], params + l->woff, dy, n, (int)in_size(l),
                       l->oc, dx, NULL, NULL);
    break;
  case DNNT_RELU:
    if (i > 0)
      dnnk_relu_backward(t->act[i], dy, count, dx);
    break;
  case DNNT_MAXPOOL:
    if (i > 0) {
      dnnk_pool_desc d = dnnt_pool_of(l, n);
      dnnk_maxpool_backward(&d, dy, t->argmax[i], dx);
    }
    break;
  case DNNT_DROPOUT:
    for (long j = 0; j < count; ++j)
      dx[j] = dy[j] * t->mask[i][j];
    break;
  case DNNT_ADD:
    /* Both branches get dy: the skip's share waits in grad[skip], unused
     * until the backward pass reaches the skip layer. */
    memcpy(dx, dy, sizeof(float) * (size_t)count);
    memcpy(t->grad[l->skip], dy, sizeof(float) * (size_t)count);
    break;
  case DNNT_SKIP:
    for (long j = 0; j < count; ++j)
      dx[j] += dy[j];
    break;
  }
}

/* The callback when the caller needs none. */
static void no_ready(void *ctx, int layer) {
  (void)ctx;
  (void)layer;
}

void dnnt_backward(dnnt_trainer *t, const float *params, const int32_t *labels,
                   int n, float loss_scale, float *grads,
                   dnnt_grad_ready_fn ready, void *ctx) {
  const dnnt_net *net = t->net;
  int L = net->nlayers, cls = dnnt_classes(net);
  float *dlogits = t->grad[L];
  if (!ready)
    ready = no_ready;
  dnnk_softmax_xent_backward(t->prob, labels, n, cls, dlogits);
  if (loss_scale != 1.0f)
    for (long j = 0; j < (long)n * cls; ++j)
      dlogits[j] *= loss_scale;
  for (int i = L - 1; i >= 0; --i) {
    layer_backward(t, i, params, n, grads, ready, ctx);
    ready(ctx, -1);
  }
}

#pragma omp end declare target
