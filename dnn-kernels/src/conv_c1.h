/* The data and weights' gradients of a layer with one input channel at
 * stride 1 (a network's first layer) on NCHW, computed directly: the passes
 * behind dnnk_conv2d_backward_data_ex and _weights_ex for such layers. */
#ifndef DNNK_CONV_C1_H
#define DNNK_CONV_C1_H

#include <stddef.h>

#include "dnnk.h"

#ifdef __cplusplus
extern "C" {
#endif

#pragma omp declare target

/* Nonzero when the layer's data gradient is one this pass takes. */
int c1_applies(const dnnk_conv_desc *d, int layout);
/* Floats the pass needs with threads threads. */
size_t c1_workspace(const dnnk_conv_desc *d, int threads);
/* dx given dy; every point of dx is written. */
void c1_backward_data(const dnnk_conv_desc *d, const float *dy, const float *wt,
                      float *dx, float *ws, size_t ws_floats);

/* The weights' gradient of such a layer (kernel 3 or 5 wide), in
 * conv_c1_wt.c: nonzero when the pass takes the layer. */
int c1_weights_applies(const dnnk_conv_desc *d, int layout);
/* Floats the weights' gradient needs with threads threads. */
size_t c1_weights_workspace(const dnnk_conv_desc *d, int threads);
/* dw (and dbias unless NULL) given x and dy; every element is written. */
void c1_backward_weights(const dnnk_conv_desc *d, const float *x,
                         const float *dy, float *dw, float *dbias, float *ws,
                         size_t ws_floats);

#pragma omp end declare target

#ifdef __cplusplus
}
#endif

#endif /* DNNK_CONV_C1_H */
