/* Workspace allocation that fails loudly. */
#include "alloc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#pragma omp declare target

void *dnnk_alloc(size_t bytes, const char *what) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) {
    int e = errno;
    fprintf(stderr, "dnnk error: %s: cannot allocate %zu bytes (%s)\n", what,
            bytes, strerror(e));
    abort();
  }
  return p;
}

#pragma omp end declare target
