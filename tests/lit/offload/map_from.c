// map(from:): device-computed arrays and scalars come back to the host.
// RUN: %clang-offload %s -o %t && %run-dpu %t | FileCheck %s
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define N 4096

int main(void) {
  static long sq[N];
  char msg[32];
  double half[8];
  for (int i = 0; i < N; ++i)
    sq[i] = -7;
  memset(msg, 0, sizeof msg);
  int host_pid = getpid(), dev_pid = -1;

#pragma omp target map(from : sq[0:N], msg, half, dev_pid)
  {
    dev_pid = getpid();
    for (int i = 0; i < N; ++i)
      sq[i] = (long)i * i;
    const char *text = "computed on the DPU";
    int k = 0;
    for (; text[k]; ++k)
      msg[k] = text[k];
    msg[k] = 0;
    for (int i = 0; i < 8; ++i)
      half[i] = i / 2.0;
  }

  long total = 0;
  int mismatches = 0;
  for (int i = 0; i < N; ++i) {
    total += sq[i];
    if (sq[i] != (long)i * i)
      ++mismatches;
  }
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  // CHECK: on-server: 1
  printf("total: %ld mismatches: %d last: %ld\n", total, mismatches, sq[N - 1]);
  // CHECK-NEXT: total: 22898104320 mismatches: 0 last: 16769025
  printf("msg: %s\n", msg);
  // CHECK-NEXT: msg: computed on the DPU
  printf("half: %.1f %.1f %.1f\n", half[1], half[4], half[7]);
  // CHECK-NEXT: half: 0.5 2.0 3.5
  return 0;
}
