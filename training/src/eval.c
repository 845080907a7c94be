/* Inference: the forward pass without dropout and the evaluation of a
 * labelled set. `declare target`: the validation runs here on the DPU. */
#include <string.h>

#include "internal.h"

#pragma omp declare target

long dnnt_out_size(const dnnt_net *net, int i) {
  const dnnt_layer *l = &net->layer[i];
  return (long)l->oc * l->oh * l->ow;
}

int dnnt_classes(const dnnt_net *net) {
  return (int)dnnt_out_size(net, net->nlayers - 1);
}

long dnnt_max_act(const dnnt_net *net) {
  long m = (long)net->in_c * net->in_h * net->in_w;
  for (int i = 0; i < net->nlayers; ++i) {
    long o = dnnt_out_size(net, i);
    m = o > m ? o : m;
  }
  return m;
}

dnnk_conv_desc dnnt_conv_of(const dnnt_layer *l, int n) {
  dnnk_conv_desc d = {n,    l->c,      l->h,      l->w,   l->oc, l->k,
                      l->k, l->stride, l->stride, l->pad, l->pad};
  return d;
}

dnnk_pool_desc dnnt_pool_of(const dnnt_layer *l, int n) {
  dnnk_pool_desc d = {n,    l->c,      l->h,      l->w, l->k,
                      l->k, l->stride, l->stride, 0,    0};
  return d;
}

int dnnt_conv_chunk(const dnnt_layer *l, int n) {
  long col = (long)l->c * l->k * l->k * l->oh * l->ow; /* floats per image */
  long chunk = (2l << 20) / (col > 0 ? col : 1);       /* 8 MiB of columns */
  return (int)(chunk < 1 ? 1 : chunk > n ? n : chunk);
}

long dnnt_conv_ws(const dnnt_net *net, int n) {
  long m = 0;
  for (int i = 0; i < net->nlayers; ++i) {
    if (net->layer[i].kind != DNNT_CONV)
      continue;
    dnnk_conv_desc d =
        dnnt_conv_of(&net->layer[i], dnnt_conv_chunk(&net->layer[i], n));
    long s = (long)dnnk_conv_workspace(&d);
    m = s > m ? s : m;
  }
  return m;
}

void dnnt_layer_forward(const dnnt_net *net, int i, const float *params,
                        const float *x, float *y, int n, float *ws,
                        float *skipbuf, int32_t *argmax) {
  const dnnt_layer *l = &net->layer[i];
  long in = (long)n * l->c * l->h * l->w;
  switch (l->kind) {
  case DNNT_CONV: {
    int chunk = dnnt_conv_chunk(l, n);
    long xs = (long)l->c * l->h * l->w, ys = (long)l->oc * l->oh * l->ow;
    for (int s = 0; s < n; s += chunk) {
      dnnk_conv_desc d = dnnt_conv_of(l, n - s < chunk ? n - s : chunk);
      dnnk_conv2d_forward(&d, x + s * xs, params + l->woff, params + l->boff,
                          y + s * ys, ws);
    }
    break;
  }
  case DNNT_RELU:
    dnnk_relu_forward(x, in, y);
    break;
  case DNNT_MAXPOOL: {
    dnnk_pool_desc d = dnnt_pool_of(l, n);
    dnnk_maxpool_forward(&d, x, y, argmax);
    break;
  }
  case DNNT_FC:
    dnnk_fc_forward(x, params + l->woff, params + l->boff, n,
                    l->c * l->h * l->w, l->oc, y);
    break;
  case DNNT_SKIP:
    memcpy(skipbuf, x, sizeof(float) * (size_t)in);
    memcpy(y, x, sizeof(float) * (size_t)in);
    break;
  case DNNT_ADD:
    for (long j = 0; j < in; ++j)
      y[j] = x[j] + skipbuf[j];
    break;
  default: /* DNNT_DROPOUT: identity in inference */
    memcpy(y, x, sizeof(float) * (size_t)in);
    break;
  }
}

long dnnt_eval_workspace(const dnnt_net *net, int n) {
  return 3 * (long)n * dnnt_max_act(net) + dnnt_conv_ws(net, n);
}

void dnnt_forward_eval(const dnnt_net *net, const float *params, const float *x,
                       int n, float *logits, float *ws) {
  long m = (long)n * dnnt_max_act(net);
  float *buf[2] = {ws, ws + m};
  float *skipbuf = ws + 2 * m, *cws = ws + 3 * m;
  const float *cur = x;
  for (int i = 0; i < net->nlayers; ++i) {
    float *out = i == net->nlayers - 1 ? logits : buf[i % 2];
    dnnt_layer_forward(net, i, params, cur, out, n, cws, skipbuf, NULL);
    cur = out;
  }
}

long dnnt_evaluate_workspace(const dnnt_net *net, int batch) {
  long img = (long)net->in_c * net->in_h * net->in_w;
  long cls = dnnt_classes(net);
  return (long)batch * (img + 2 * cls) + dnnt_eval_workspace(net, batch);
}

dnnt_eval_result dnnt_evaluate(const dnnt_net *net, const float *params,
                               const uint8_t *images, const int32_t *labels,
                               long count, int batch,
                               const dnnk_augment_params *norm, float *ws) {
  dnnt_eval_result r = {0, 0, 0.0};
  int c = net->in_c, h = net->in_h, w = net->in_w, cls = dnnt_classes(net);
  long img = (long)c * h * w;
  float *x = ws, *logits = ws + (long)batch * img;
  float *prob = logits + (long)batch * cls, *rest = prob + (long)batch * cls;
  for (long s = 0; s < count; s += batch) {
    int n = (int)(count - s < batch ? count - s : batch);
    dnnk_augment_batch(norm, images + s * img, DNNK_NCHW, n, c, h, w, s, x);
    dnnt_forward_eval(net, params, x, n, logits, rest);
    float mean = dnnk_softmax_xent_forward(logits, labels + s, n, cls, prob);
    r.loss_sum += (double)mean * n;
    for (int b = 0; b < n; ++b) {
      const float *row = logits + (long)b * cls;
      int best = 0;
      for (int k = 1; k < cls; ++k)
        best = row[k] > row[best] ? k : best;
      r.correct += best == labels[s + b];
    }
    r.count += n;
  }
  return r;
}

#pragma omp end declare target
