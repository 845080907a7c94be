/* Workspace allocation for the passes, whose API has no error channel. */
#ifndef DNNK_ALLOC_H
#define DNNK_ALLOC_H

#include <stddef.h>

#pragma omp declare target

/* malloc(bytes), or, when that fails, "dnnk error: <what>: cannot allocate
 * N bytes" on stderr and abort(): a pass that cannot run must not return as
 * if it had written its output. */
void *dnnk_alloc(size_t bytes, const char *what);

#pragma omp end declare target

#endif /* DNNK_ALLOC_H */
