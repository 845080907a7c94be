// `declare target link` is not supported (the device image has no entry
// for the variable's reference, which the host's table lists): the program
// is told so, naming the variable and what to use instead, not only that
// the entry counts differ (LLVM's host plugin crashes on it).
// UNSUPPORTED: arm-vm, llvm15, llvm16, llvm17, llvm18, llvm19
// RUN: %clang-offload %s -o %t
// RUN: not %run-dpu %t 2>&1 | FileCheck %s
// CHECK: ompdpu error: device 0 ({{.*}}): cannot load image: `declare target link` is not supported (Linked): use `declare target to`, or map the variable in the regions' clauses
// CHECK-NOT: sum:
#include <stdio.h>

int Linked[4] = {1, 2, 3, 4};
#pragma omp declare target link(Linked)

int main(void) {
  int sum = 0;
#pragma omp target map(tofrom : Linked) map(from : sum)
  for (int i = 0; i < 4; ++i)
    sum += Linked[i];
  printf("sum: %d\n", sum);
  return 0;
}
