// What a kernel printed before it crashed still reaches the program's
// output, before the error: the session's output buffer lives in memory the
// supervisor shares, which sends what the dead session did not. Also when
// the program's stdout is a pipe (fully buffered) and libomptarget aborts.
// RUN: %clang-offload %s -o %t
// RUN: not %run-dpu %t 2>&1 | FileCheck %s
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
  printf("host before\n");
  int value = 42;
#pragma omp target map(to : value)
  {
    printf("device pid %d differs: about to crash\n", getpid());
    for (int i = 0; i < 3; ++i)
      printf("line %d of %d\n", i, value);
    volatile uintptr_t addr = 0;
    *(int *)addr = value;
  }
  printf("survived\n");
  return 0;
}
// CHECK: host before
// CHECK: device pid {{[0-9]+}} differs: about to crash
// CHECK-NEXT: line 0 of 42
// CHECK-NEXT: line 1 of 42
// CHECK-NEXT: line 2 of 42
// CHECK: ompdpu error: device 0 ({{[0-9.]+}}:{{[0-9]+}}): session process died:
// SIGSEGV CHECK-NOT: survived
