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

void dnnk_fail(const char *fn, const char *why) {
  fprintf(stderr, "dnnk error: %s: %s\n", fn, why);
  abort();
}

#pragma omp end declare target
