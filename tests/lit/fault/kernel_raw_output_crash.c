// Raw writes to fds 1 and 2 (write(2), not stdio) right before a kernel
// crashes reach the program's output once each, before the error: the
// crash handler forwards what is still in the pipes behind fds 1 and 2, and
// the client writes each byte of a stream once, also when the session and
// then its supervisor both send it. Twenty runs: the races are narrow.
// (Not in the arm64 VM, where twenty runs take minutes.)
// UNSUPPORTED: arm-vm
// RUN: %clang-offload %s -o %t
// RUN: sh -c 'for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do \
// RUN:   %run-dpu %t > %t.o 2> %t.e; \
// RUN:   echo "A=$(grep -c raw-A %t.e) B=$(grep -c raw-B %t.e) \
// RUN:     out=$(grep -c raw-out %t.o) \
// RUN:     error=$(grep -q "process died: SIGABRT" %t.e && echo yes)"; \
// RUN: done' | sort | uniq -c | FileCheck %s
// CHECK: 20 A=1 B=1 out=1 error=yes
#include <stdlib.h>
#include <unistd.h>

int main(void) {
  int value = 1;
#pragma omp target map(to : value)
  {
    write(2, "raw-A\n", 6);
    write(1, "raw-out\n", 8);
    write(2, "raw-B\n", 6);
    if (value)
      abort();
  }
  return 0;
}
