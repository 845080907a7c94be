// With --param libomptarget_dir=DIR (llvm-patches/apply-and-test.sh), the
// programs of this suite run with DIR's libomptarget.so, not the LLVM
// install's: the patched library is the one tested.
// REQUIRES: libomptarget-override
// RUN: %clang-offload %s -ldl -o %t && %run-dpu %t | FileCheck %s -DDIR=%libomptarget-dir
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

void __tgt_target_mapper(void); // libomptarget's entry point for a region

int main(void) {
  Dl_info info;
  if (!dladdr((void *)&__tgt_target_mapper, &info) || !info.dli_fname)
    return 1;
  int host_pid = getpid(), dev_pid = -1;
#pragma omp target map(from : dev_pid)
  dev_pid = getpid();
  printf("libomptarget: %s\n", info.dli_fname);
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  return 0;
}
// CHECK: libomptarget: [[DIR]]/libomptarget.so
// CHECK-NEXT: on-server: 1
