/* dnnt: training networks on dnn-kernels (dnnk).
 *
 * A network is a plain struct (a list of layers with their shapes and the
 * offsets of their parameters in one flat float vector), so it can be
 * mapped to an OpenMP device as it is: inference (dnnt_forward_eval,
 * dnnt_evaluate) is `declare target` and runs on the host, on LLVM's host
 * plugin and on a DPU through ompdpu. Training (forward with the stored
 * activations, backward, SGD) runs on the host. All randomness (weight
 * initialisation, dropout) is counter-based Philox keyed by a seed, so a
 * seed fixes a run whatever the number of ranks or threads.
 *
 *   dnnt_net net;
 *   dnnt_net_init(&net, 1, 28, 28);
 *   dnnt_conv(&net, 32, 5, 1, 2); dnnt_relu(&net); dnnt_maxpool(&net, 2, 2);
 *   dnnt_fc(&net, 10);
 *   if (dnnt_net_check(&net, err, sizeof err)) ...
 */
#ifndef DNNT_H
#define DNNT_H

#include <stddef.h>
#include <stdint.h>

#include "dnnk.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ network -- */

/* Layer kinds. */
enum dnnt_kind {
  DNNT_CONV = 1, /* 2D convolution with bias */
  DNNT_RELU,     /* max(x, 0) */
  DNNT_MAXPOOL,  /* max pooling */
  DNNT_FC,       /* fully connected with bias (flattens its input) */
  DNNT_DROPOUT,  /* inverted dropout while training, identity in inference */
  DNNT_SKIP,     /* identity that keeps its input for a later DNNT_ADD */
  DNNT_ADD       /* adds the input kept by layer `skip` (residual) */
};

/* Most layers a network may have. */
#define DNNT_MAX_LAYERS 48

/* One layer: its kind, shapes per image and where its parameters live. */
typedef struct dnnt_layer {
  int kind;
  int c, h, w;        /* input channels, height, width */
  int oc, oh, ow;     /* output channels, height, width */
  int k, stride, pad; /* conv / pool window, stride and padding */
  int skip;           /* DNNT_ADD: index of its DNNT_SKIP layer */
  float rate;         /* DNNT_DROPOUT: probability of dropping a unit */
  float init_scale;   /* factor on the initial weights (1 unless set) */
  long woff, wcount;  /* weights in the parameter vector (wcount 0: none) */
  long boff, bcount;  /* bias in the parameter vector */
} dnnt_layer;

/* A network: the layers in order, input shape, total parameter count. */
typedef struct dnnt_net {
  int nlayers;
  int in_c, in_h, in_w;
  long nparams;
  int error; /* nonzero once a layer was added with an impossible shape */
  dnnt_layer layer[DNNT_MAX_LAYERS];
} dnnt_net;

/* Starts an empty network for inputs of c x h x w. */
void dnnt_net_init(dnnt_net *net, int c, int h, int w);
/* Appends a convolution (out_channels, square kernel k); returns its index
 * or -1 (then net->error is set). */
int dnnt_conv(dnnt_net *net, int out_channels, int k, int stride, int pad);
/* Appends a ReLU. */
int dnnt_relu(dnnt_net *net);
/* Appends a max pooling with a square window k and the given stride. */
int dnnt_maxpool(dnnt_net *net, int k, int stride);
/* Appends a fully connected layer with `out` outputs. */
int dnnt_fc(dnnt_net *net, int out);
/* Appends a dropout layer dropping each unit with probability rate. */
int dnnt_dropout(dnnt_net *net, float rate);
/* Scales layer i's initial weights (e.g. the last conv of a residual
 * branch: without normalisation layers a branch at full scale doubles the
 * activations' variance per block). */
void dnnt_set_init_scale(dnnt_net *net, int i, float scale);
/* Appends a skip point; a later dnnt_add(net, index) adds its input. */
int dnnt_skip(dnnt_net *net);
/* Appends the residual addition of the input kept by skip layer `skip`. */
int dnnt_add(dnnt_net *net, int skip);
/* 0 if the network is usable, else writes why into err and returns -1. */
int dnnt_net_check(const dnnt_net *net, char *err, size_t errlen);

/* The reference CNN for 28x28x1 images of the issue: conv 5x5 1->32 p2,
 * ReLU, pool 2, conv 5x5 32->64 p2, ReLU, pool 2, fc 3136->256, ReLU,
 * dropout 0.25, fc 256->10. */
void dnnt_reference_cnn(dnnt_net *net);
/* A small residual network for 32x32x3 inputs (scaling runs). */
void dnnt_small_resnet(dnnt_net *net, int classes);

/* ------------------------------------------------------- parameters -- */

/* Kaiming-uniform weights (U(-sqrt(6/fan_in), +)), zero biases, drawn with
 * Philox from seed: the same vector for the same seed everywhere. */
void dnnt_init_params(const dnnt_net *net, uint64_t seed, float *params);
/* FNV-1a of the bytes of n floats: the weight hash compared across ranks. */
uint64_t dnnt_hash(const float *v, long n);

/* ------------------------------------------- inference (declare target) */

#ifdef _OPENMP
#pragma omp declare target
#endif

/* Output values per image of layer i (its oc * oh * ow). */
long dnnt_out_size(const dnnt_net *net, int i);
/* Number of classes: the last layer's output size. */
int dnnt_classes(const dnnt_net *net);
/* Floats of scratch dnnt_forward_eval needs for a batch of n. */
long dnnt_eval_workspace(const dnnt_net *net, int n);
/* logits (n x classes) of n images x (NCHW floats), dropout off. */
void dnnt_forward_eval(const dnnt_net *net, const float *params, const float *x,
                       int n, float *logits, float *ws);

/* What dnnt_evaluate counts. */
typedef struct dnnt_eval_result {
  long correct;    /* images whose arg-max class is the label */
  long count;      /* images evaluated */
  double loss_sum; /* sum of the per-image cross-entropies */
} dnnt_eval_result;

/* Floats of scratch dnnt_evaluate needs for batches of `batch`. */
long dnnt_evaluate_workspace(const dnnt_net *net, int batch);
/* Evaluates `count` uint8 images (c x h x w each, NCHW) with their labels in
 * batches of `batch`, normalised by norm (no crop or flip): accuracy and
 * loss. The same result on every device for the same code. */
dnnt_eval_result dnnt_evaluate(const dnnt_net *net, const float *params,
                               const uint8_t *images, const int32_t *labels,
                               long count, int batch,
                               const dnnk_augment_params *norm, float *ws);

#ifdef _OPENMP
#pragma omp end declare target
#endif

/* ----------------------------------------------------------- training -- */

/* Activations, masks and gradients of one batch: what backward needs. */
typedef struct dnnt_trainer {
  const dnnt_net *net;
  int n; /* batch size it was made for */
  float
      *act[DNNT_MAX_LAYERS + 1]; /* act[i]: input of layer i; act[L]: logits */
  float *grad[DNNT_MAX_LAYERS + 1]; /* gradient of the loss wrt act[i] */
  int32_t *argmax[DNNT_MAX_LAYERS]; /* max-pooling positions */
  float *mask[DNNT_MAX_LAYERS];     /* dropout scale (0 or 1/(1-rate)) */
  float *prob;                      /* softmax output */
  float *ws;                        /* convolution scratch */
  float *wscratch; /* one chunk's conv weight gradient, summed over chunks */
} dnnt_trainer;

/* Where the dropout draws of a batch come from: (seed, step, image). */
typedef struct dnnt_batch_key {
  uint64_t seed;
  uint32_t step; /* global step of the run */
  long
      first_image; /* position of the batch's first image in the global batch */
} dnnt_batch_key;

/* Called by dnnt_backward after the parameter gradients of layer i are
 * complete (from the last layer to the first), and between layers with
 * i = -1: the trainer starts allreduces and drives MPI progress there. */
typedef void (*dnnt_grad_ready_fn)(void *ctx, int layer);

#ifdef _OPENMP
#pragma omp declare target
#endif

/* Allocates the buffers for batches of up to n; 0 or -1 (out of memory). */
int dnnt_trainer_init(dnnt_trainer *t, const dnnt_net *net, int n);
/* Frees what dnnt_trainer_init allocated. */
void dnnt_trainer_free(dnnt_trainer *t);
/* Forward pass of n <= t->n images with dropout on; returns the mean loss
 * over the n images and counts correct predictions into *correct. */
float dnnt_forward_train(dnnt_trainer *t, const float *params, const float *x,
                         const int32_t *labels, int n, dnnt_batch_key key,
                         long *correct);
/* Backward pass after dnnt_forward_train: writes the gradient of
 * loss_scale * (sum of the n per-image losses) / n into grads (layout of
 * params). loss_scale = n / global batch makes a sum over ranks the mean
 * over the global batch. */
void dnnt_backward(dnnt_trainer *t, const float *params, const int32_t *labels,
                   int n, float loss_scale, float *grads,
                   dnnt_grad_ready_fn ready, void *ctx);

#ifdef _OPENMP
#pragma omp end declare target
#endif

/* ---------------------------------------------------------- optimizer -- */

/* Learning-rate schedules. */
enum dnnt_sched_kind { DNNT_LR_CONSTANT = 0, DNNT_LR_STEP, DNNT_LR_COSINE };

/* SGD with momentum and weight decay (PyTorch's formulation), and its
 * learning-rate schedule. */
typedef struct dnnt_sgd {
  float lr, momentum, weight_decay;
  int schedule;      /* dnnt_sched_kind */
  int epochs;        /* cosine: length of the schedule */
  int step_epochs;   /* step: decay every step_epochs */
  float gamma;       /* step: decay factor */
  int warmup_epochs; /* linear warm-up from lr / 10 (0: none) */
} dnnt_sgd;

/* Learning rate at fractional epoch position `epoch` (step / steps per
 * epoch), computed in double and rounded once. */
float dnnt_lr_at(const dnnt_sgd *o, double epoch);
/* v = momentum v + (g + wd w); w -= lr v, over n parameters. */
void dnnt_sgd_step(const dnnt_sgd *o, float lr, float *w, float *v,
                   const float *g, long n);

#ifdef __cplusplus
}
#endif

#endif /* DNNT_H */
