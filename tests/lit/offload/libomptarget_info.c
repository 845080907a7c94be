// LIBOMPTARGET_INFO is honoured, and only when set: libomptarget reports each
// copy to the device (info bit 0x20) for a region offloaded to ompdpu. The
// first llvm-patches patch changes how this variable is read; this test runs
// against the stock libomptarget and, from llvm-patches/apply-and-test.sh,
// the patched one.
// RUN: %clang-offload %s -o %t
// RUN: env LIBOMPTARGET_INFO=32 %run-dpu %t 2>&1 | FileCheck %s --check-prefix=INFO
// RUN: env -u LIBOMPTARGET_INFO %run-dpu %t 2>&1 | FileCheck %s --check-prefix=QUIET
#include <stdio.h>
#include <unistd.h>

int main(void) {
  int a[64];
  for (int i = 0; i < 64; ++i)
    a[i] = i;
  int host_pid = getpid(), dev_pid = -1, sum = 0;
#pragma omp target map(to : a[0:64]) map(from : sum, dev_pid)
  {
    dev_pid = getpid();
    for (int i = 0; i < 64; ++i)
      sum += a[i];
  }
  printf("on-server: %d sum: %d\n", dev_pid > 0 && dev_pid != host_pid, sum);
  return 0;
}
// INFO: Libomptarget device 0 info: Copying data from host to device, {{.*}}Size=256
// INFO: on-server: 1 sum: 2016
// QUIET-NOT: Libomptarget
// QUIET: on-server: 1 sum: 2016
// QUIET-NOT: Libomptarget
