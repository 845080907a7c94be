/* Direct convolutions on the blocked channel layout (DNNK_NCHWC): the three
 * passes behind dnnk_conv2d_*_ex(..., DNNK_NCHWC, ...). */
#ifndef DNNK_CONVBLK_H
#define DNNK_CONVBLK_H

#include <stddef.h>

#include "dnnk.h"

#ifdef __cplusplus
extern "C" {
#endif

#pragma omp declare target

/* Floats the blocked passes need with threads threads. */
size_t bk_workspace(const dnnk_conv_desc *d, int threads);
/* y = conv(x, wt) + bias on blocked x and y; wt KCRS. */
void bk_forward(const dnnk_conv_desc *d, const float *x, const float *wt,
                const float *bias, float *y, float *ws, size_t ws_floats);
/* dx given dy, both blocked; wt KCRS. */
void bk_backward_data(const dnnk_conv_desc *d, const float *dy, const float *wt,
                      float *dx, float *ws, size_t ws_floats);
/* dwt (KCRS) and dbias (may be NULL) given blocked x and dy; overwrites. */
void bk_backward_weights(const dnnk_conv_desc *d, const float *x,
                         const float *dy, float *dwt, float *dbias, float *ws,
                         size_t ws_floats);

#pragma omp end declare target

#ifdef __cplusplus
}
#endif

#endif /* DNNK_CONVBLK_H */
