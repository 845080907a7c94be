// Freeing device memory twice, or from inside a block, is refused with an
// error naming the address, and every other allocation stays usable: small
// blocks (carved on the host from slabs the server allocated; the slab's
// first block starts where the slab does) and large ones alike.
// RUN: %clang-offload %s -o %t && %run-dpu %t 2>&1 | FileCheck %s
#include <omp.h>
#include <stdio.h>
#include <unistd.h>

static int use(int *P, int dev) {
  int v = 0, pid = 0;
#pragma omp target device(dev) is_device_ptr(P) map(from : v, pid)
  {
    P[0] = 41;
    v = ++P[0];
    pid = getpid();
  }
  return v == 42 && pid != getpid();
}

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0); // in order with the plugin's errors
  int dev = omp_get_default_device();
  char *small = omp_target_alloc(1024, dev);
  int *keep = omp_target_alloc(64, dev);
  omp_target_free(small, dev);
  omp_target_free(small, dev);
  // CHECK: ompdpu error: device 0 ({{.*}}): 0x{{[0-9a-f]+}} was already freed
  omp_target_free((char *)keep + 8, dev);
  // CHECK: ompdpu error: device 0 ({{.*}}): 0x{{[0-9a-f]+}} is not a block that was allocated
  printf("small kept, on-server: %d\n", use(keep, dev));
  // CHECK: small kept, on-server: 1
  char *large = omp_target_alloc(8 << 20, dev);
  int *big = omp_target_alloc(8 << 20, dev);
  omp_target_free(large, dev);
  omp_target_free(large, dev);
  // CHECK: ompdpu error: device 0 ({{.*}}): 0x{{[0-9a-f]+}} was already freed
  printf("large kept, on-server: %d\n", use(big, dev));
  // CHECK: large kept, on-server: 1
  omp_target_free(keep, dev);
  omp_target_free(big, dev);
  return 0;
}
