// No server listening at the configured address (port 1). Offload not
// mandatory: a note, and the program runs on the host with correct results.
// Mandatory: an error and a non-zero exit, no result.
// RUN: %clang-offload %s -o %t
// RUN: %run-no-server %t 2>&1 | FileCheck %s --check-prefix=NOTE
// RUN: not env OMP_TARGET_OFFLOAD=mandatory %run-no-server %t 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MAND
// no_server_loopback.c and (arm64 VM) tests/lit-arm/arm/no_host.c run this
// program in more ways.
#include <stdio.h>
#include <unistd.h>

#define N 1000

int main(void) {
  int a[N];
  for (int i = 0; i < N; ++i)
    a[i] = i;
  int host_pid = getpid(), dev_pid = -1;
  long sum = 0;
#pragma omp target map(to : a) map(from : sum, dev_pid)
  {
    dev_pid = getpid();
    long s = 0;
    for (int i = 0; i < N; ++i)
      s += a[i];
    sum = s;
  }
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  printf("sum: %ld\n", sum);
  return 0;
}
// NOTE: ompdpu note: device 0 ({{[0-9.]+}}:1): cannot connect: {{.+}}
// NOTE: on-server: 0
// NOTE-NEXT: sum: 499500

// MAND: ompdpu error: device 0 ({{[0-9.]+}}:1): cannot connect: {{.+}}
// MAND-NOT: sum:
