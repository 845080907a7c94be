/* Network definition: layers appended in order, shapes checked as they are
 * added, parameters laid out in one flat vector; the two models. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dnnt.h"

void dnnt_net_init(dnnt_net *net, int c, int h, int w) {
  memset(net, 0, sizeof *net);
  net->in_c = c;
  net->in_h = h;
  net->in_w = w;
}

/* A new layer whose input is the previous layer's output (or the input). */
static dnnt_layer *append(dnnt_net *net, int kind) {
  if (net->error || net->nlayers >= DNNT_MAX_LAYERS) {
    net->error = 1;
    return NULL;
  }
  dnnt_layer *l = &net->layer[net->nlayers];
  memset(l, 0, sizeof *l);
  l->kind = kind;
  l->skip = -1;
  l->init_scale = 1.0f;
  if (net->nlayers == 0) {
    l->c = net->in_c, l->h = net->in_h, l->w = net->in_w;
  } else {
    const dnnt_layer *p = &net->layer[net->nlayers - 1];
    l->c = p->oc, l->h = p->oh, l->w = p->ow;
  }
  l->oc = l->c, l->oh = l->h, l->ow = l->w;
  return l;
}

/* Gives layer l `w` weights and `b` biases at the end of the vector. */
static int add_params(dnnt_net *net, dnnt_layer *l, long w, long b) {
  l->woff = net->nparams;
  l->wcount = w;
  l->boff = net->nparams + w;
  l->bcount = b;
  net->nparams += w + b;
  return net->nlayers++;
}

/* Marks the network broken (a shape that cannot be) and returns -1. */
static int fail(dnnt_net *net) {
  net->error = 1;
  return -1;
}

int dnnt_conv(dnnt_net *net, int out_channels, int k, int stride, int pad) {
  dnnt_layer *l = append(net, DNNT_CONV);
  if (!l || out_channels < 1 || k < 1 || stride < 1 || pad < 0)
    return fail(net);
  l->k = k, l->stride = stride, l->pad = pad;
  l->oc = out_channels;
  l->oh = (l->h + 2 * pad - k) / stride + 1;
  l->ow = (l->w + 2 * pad - k) / stride + 1;
  if (l->oh < 1 || l->ow < 1)
    return fail(net);
  return add_params(net, l, (long)out_channels * l->c * k * k, out_channels);
}

int dnnt_relu(dnnt_net *net) {
  dnnt_layer *l = append(net, DNNT_RELU);
  return l ? net->nlayers++ : -1;
}

int dnnt_maxpool(dnnt_net *net, int k, int stride) {
  dnnt_layer *l = append(net, DNNT_MAXPOOL);
  if (!l || k < 1 || stride < 1)
    return fail(net);
  l->k = k, l->stride = stride;
  l->oh = (l->h - k) / stride + 1;
  l->ow = (l->w - k) / stride + 1;
  if (l->oh < 1 || l->ow < 1)
    return fail(net);
  return net->nlayers++;
}

int dnnt_fc(dnnt_net *net, int out) {
  dnnt_layer *l = append(net, DNNT_FC);
  if (!l || out < 1)
    return fail(net);
  long in = (long)l->c * l->h * l->w;
  l->oc = out, l->oh = 1, l->ow = 1;
  return add_params(net, l, in * out, out);
}

int dnnt_dropout(dnnt_net *net, float rate) {
  dnnt_layer *l = append(net, DNNT_DROPOUT);
  if (!l || !(rate >= 0.0f && rate < 1.0f))
    return fail(net);
  l->rate = rate;
  return net->nlayers++;
}

int dnnt_skip(dnnt_net *net) {
  dnnt_layer *l = append(net, DNNT_SKIP);
  return l ? net->nlayers++ : -1;
}

int dnnt_add(dnnt_net *net, int skip) {
  dnnt_layer *l = append(net, DNNT_ADD);
  if (!l || skip < 0 || skip >= net->nlayers - 1 ||
      net->layer[skip].kind != DNNT_SKIP)
    return fail(net);
  const dnnt_layer *s = &net->layer[skip];
  if (s->c != l->c || s->h != l->h || s->w != l->w)
    return fail(net);
  /* One open skip at a time: the evaluation keeps a single saved tensor. */
  for (int i = skip + 1; i < net->nlayers; ++i)
    if (net->layer[i].kind == DNNT_SKIP || net->layer[i].kind == DNNT_ADD)
      return fail(net);
  l->skip = skip;
  return net->nlayers++;
}

int dnnt_net_check(const dnnt_net *net, char *err, size_t errlen) {
  if (net->error) {
    snprintf(err, errlen,
             "a layer was added with an impossible shape or "
             "parameter (or more than %d layers)",
             DNNT_MAX_LAYERS);
    return -1;
  }
  if (net->nlayers == 0 || net->layer[net->nlayers - 1].kind != DNNT_FC) {
    snprintf(err, errlen, "the network must end with a fully connected layer");
    return -1;
  }
  return 0;
}

void dnnt_reference_cnn(dnnt_net *net) {
  dnnt_net_init(net, 1, 28, 28);
  dnnt_conv(net, 32, 5, 1, 2);
  dnnt_relu(net);
  dnnt_maxpool(net, 2, 2);
  dnnt_conv(net, 64, 5, 1, 2);
  dnnt_relu(net);
  dnnt_maxpool(net, 2, 2);
  dnnt_fc(net, 256);
  dnnt_relu(net);
  dnnt_dropout(net, 0.25f);
  dnnt_fc(net, 10);
}

void dnnt_set_init_scale(dnnt_net *net, int i, float scale) {
  if (i >= 0 && i < net->nlayers)
    net->layer[i].init_scale = scale;
}

/* A residual block: skip, conv 3x3, ReLU, conv 3x3 (small initial
 * weights: the block starts close to the identity), add, ReLU. */
static void res_block(dnnt_net *net, int channels) {
  int s = dnnt_skip(net);
  dnnt_conv(net, channels, 3, 1, 1);
  dnnt_relu(net);
  dnnt_set_init_scale(net, dnnt_conv(net, channels, 3, 1, 1), 0.1f);
  dnnt_add(net, s);
  dnnt_relu(net);
}

void dnnt_small_resnet(dnnt_net *net, int classes) {
  dnnt_net_init(net, 3, 32, 32);
  dnnt_conv(net, 16, 3, 1, 1);
  dnnt_relu(net);
  res_block(net, 16);
  dnnt_conv(net, 32, 3, 2, 1); /* 16x16 */
  dnnt_relu(net);
  res_block(net, 32);
  dnnt_conv(net, 64, 3, 2, 1); /* 8x8 */
  dnnt_relu(net);
  res_block(net, 64);
  dnnt_maxpool(net, 2, 2); /* 4x4 */
  dnnt_fc(net, classes);
}

void dnnt_init_params(const dnnt_net *net, uint64_t seed, float *params) {
  memset(params, 0, sizeof(float) * (size_t)net->nparams);
  for (int i = 0; i < net->nlayers; ++i) {
    const dnnt_layer *l = &net->layer[i];
    if (!l->wcount)
      continue;
    long fan_in = l->wcount / l->oc; /* c k k, or the fc's inputs */
    double bound = sqrt(6.0 / (double)fan_in) * l->init_scale;
    for (long j = 0; j < l->wcount; ++j) {
      /* Draws keyed by (layer, weight): independent of everything else. */
      uint32_t r =
          dnnk_philox(seed, 0x696e6974u + (uint32_t)i, (uint64_t)j, 0, 0);
      double u = ((double)r + 0.5) / 4294967296.0; /* (0, 1) */
      params[l->woff + j] = (float)((2.0 * u - 1.0) * bound);
    }
  }
}

uint64_t dnnt_hash(const float *v, long n) {
  const unsigned char *p = (const unsigned char *)v;
  uint64_t h = 0xcbf29ce484222325ull;
  for (long i = 0; i < n * (long)sizeof(float); ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}
