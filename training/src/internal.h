/* Pieces shared by the inference and training passes of dnnt. */
#ifndef DNNT_INTERNAL_H
#define DNNT_INTERNAL_H

#include "dnnt.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifdef _OPENMP
#pragma omp declare target
#endif

/* Largest per-image activation of the network (input included). */
long dnnt_max_act(const dnnt_net *net);
/* Images per convolution call for layer l in a batch of n: the lowered
 * columns of a chunk stay within a few MiB (cache-sized), which halves the
 * time of the large layers against lowering the whole batch at once. */
int dnnt_conv_chunk(const dnnt_layer *l, int n);
/* Floats of convolution scratch the largest conv layer needs for n. */
long dnnt_conv_ws(const dnnt_net *net, int n);
/* The dnnk descriptor of conv layer l for a batch of n. */
dnnk_conv_desc dnnt_conv_of(const dnnt_layer *l, int n);
/* The dnnk descriptor of pooling layer l for a batch of n. */
dnnk_pool_desc dnnt_pool_of(const dnnt_layer *l, int n);
/* y = layer i of x for n images, dropout as identity; skipbuf holds the
 * input of the open DNNT_SKIP; argmax may be NULL. */
void dnnt_layer_forward(const dnnt_net *net, int i, const float *params,
                        const float *x, float *y, int n, float *ws,
                        float *skipbuf, int32_t *argmax);

#ifdef _OPENMP
#pragma omp end declare target
#endif

#ifdef __cplusplus
}
#endif

#endif
