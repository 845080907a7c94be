// `requires unified_shared_memory` cannot be met by a DPU (its memory is
// not the host's): libomptarget would hand the kernel host addresses, which
// on a DPU point to nothing, and on an emulated one to the server's own
// memory. The program gets an error naming the requirement, never a kernel
// that reads the wrong memory.
// RUN: %clang-offload %s -o %t
// RUN: not %run-dpu %t > %t.out 2>&1
// RUN: FileCheck %s < %t.out
#include <stdio.h>
#include <stdlib.h>
#pragma omp requires unified_shared_memory

int main(void) {
  int *a = malloc(10 * sizeof(int));
  for (int i = 0; i < 10; ++i)
    a[i] = i;
#pragma omp target
  for (int i = 0; i < 10; ++i)
    a[i] *= 2;
  printf("a[9]=%d\n", a[9]);
  return 0;
}
// CHECK: device 0 ({{.*}}): {{.*}}'requires unified_shared_memory' cannot be
// met: a DPU's memory is separate from the host's CHECK-NOT: a[9]= CHECK-NOT:
// SIGSEGV
