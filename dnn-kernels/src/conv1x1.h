/* Pointwise strided convolutions (1x1 kernel, no padding, a stride above 1)
 * on NCHW tensors: the three passes behind dnnk_conv2d_*_ex for such layers
 * (ResNet's downsampling shortcuts). */
#ifndef DNNK_CONV1X1_H
#define DNNK_CONV1X1_H

#include <stddef.h>

#include "dnnk.h"

#ifdef __cplusplus
extern "C" {
#endif

#pragma omp declare target

/* Nonzero when the layer is one these passes take. */
int pw_applies(const dnnk_conv_desc *d, int layout);
/* Floats the passes need with threads threads. */
size_t pw_workspace(const dnnk_conv_desc *d, int threads);
/* y = conv(x, wt) + bias (bias may be NULL). */
void pw_forward(const dnnk_conv_desc *d, const float *x, const float *wt,
                const float *bias, float *y, float *ws, size_t ws_floats);
/* dx given dy; every point of dx is written. */
void pw_backward_data(const dnnk_conv_desc *d, const float *dy, const float *wt,
                      float *dx, float *ws, size_t ws_floats);
/* dwt (k x c) and dbias (may be NULL) given x and dy; overwrites both. */
void pw_backward_weights(const dnnk_conv_desc *d, const float *x,
                         const float *dy, float *dwt, float *dbias, float *ws,
                         size_t ws_floats);

#pragma omp end declare target

#ifdef __cplusplus
}
#endif

#endif /* DNNK_CONV1X1_H */
