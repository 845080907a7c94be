/* Batched lowering shared by the three convolution passes. */
#ifndef DNNK_CONV_INTERNAL_H
#define DNNK_CONV_INTERNAL_H

#include "dnnk.h"

#ifdef __cplusplus
extern "C" {
#endif

#pragma omp declare target

/* im2col of the whole batch into one (c*kh*kw) x (n*oh*ow) matrix; image b
 * occupies columns [b*oh*ow, (b+1)*oh*ow). */
void dnnk_im2col_batch(const dnnk_conv_desc *d, const float *x, float *col);
/* Adjoint of dnnk_im2col_batch: overwrites the n x c x h x w tensor x. */
void dnnk_col2im_batch(const dnnk_conv_desc *d, const float *col, float *x);

#pragma omp end declare target

#ifdef __cplusplus
}
#endif

#endif /* DNNK_CONV_INTERNAL_H */
