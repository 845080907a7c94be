// ompdpu_device_address(k): the k-th DPU's server as configured, so that a
// program can name the DPU it lost or a rank can say which DPU it uses;
// every plugin answers it, LLVM 19's built into libomptarget too.
// RUN: %clang-offload %s -o %t && %run-dpu2 %t | FileCheck %s
#include <ompdpu.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
  const char *env = getenv("OMPDPU_DEVICES");
  const char *a0 = ompdpu_device_address(0), *a1 = ompdpu_device_address(1);
  printf("dpu 0: %s\n", a0 ? a0 : "(null)");
  // CHECK: dpu 0: {{.+}}:{{[0-9]+}}
  printf("dpu 1: %s\n", a1 ? a1 : "(null)");
  // CHECK-NEXT: dpu 1: {{.+}}:{{[0-9]+}}
  char expect[512];
  snprintf(expect, sizeof expect, "%s,%s", a0 ? a0 : "", a1 ? a1 : "");
  printf("as configured: %d\n", env && strcmp(env, expect) == 0);
  // CHECK-NEXT: as configured: 1
  printf("dpu 2: %s, dpu -1: %s\n", ompdpu_device_address(2) ? "set" : "(null)",
         ompdpu_device_address(-1) ? "set" : "(null)");
  // CHECK-NEXT: dpu 2: (null), dpu -1: (null)
  return 0;
}
