/* Layers the passes refuse (dnnk_conv_check) stop the program with a
 * message naming the routine: a pass cannot return an error, and running
 * on would read and write out of bounds. */
#ifndef DNNK_CONV_CHECK_H
#define DNNK_CONV_CHECK_H

#include "alloc.h"
#include "dnnk.h"

#pragma omp declare target
/* "dnnk error: fn: invalid convolution: why" and abort() unless d is valid. */
void dnnk_require_conv(const dnnk_conv_desc *d, const char *fn);
#pragma omp end declare target

#endif
