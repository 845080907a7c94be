/* Workspace allocation for the passes, whose API has no error channel. */
#ifndef DNNK_ALLOC_H
#define DNNK_ALLOC_H

#include <stddef.h>

#pragma omp declare target

/* malloc(bytes), or, when that fails, "dnnk error: <what>: cannot allocate
 * N bytes" on stderr and abort(): a pass that cannot run must not return as
 * if it had written its output. */
void *dnnk_alloc(size_t bytes, const char *what);
/* "dnnk error: fn: why" on stderr and abort(): arguments no pass can take
 * (as BLAS's xerbla). */
void dnnk_fail(const char *fn, const char *why);

#pragma omp end declare target

#endif /* DNNK_ALLOC_H */
