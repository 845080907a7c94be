// 10,000 small target regions back to back, each with its own small
// transfers, all on the same server process.
// RUN: %clang-offload %s -o %t && %run-dpu %t | FileCheck %s
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define REGIONS 10000

int main(void) {
  int host_pid = getpid();
  long x = 0;
  int small[8];
  long acc = 0;
  int pid_changes = 0, last_pid = -1, dev_pid = -1;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 0; i < REGIONS; ++i) {
    for (int k = 0; k < 8; ++k)
      small[k] = i + k;
    long got = 0;
#pragma omp target map(tofrom : x) map(to : small) map(from : got, dev_pid) firstprivate(i)
    {
      x += 1;
      got = small[7] - small[0] + (i % 3);
      dev_pid = getpid();
    }
    acc += got;
    if (dev_pid != last_pid) {
      ++pid_changes;
      last_pid = dev_pid;
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double us = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / 1e3 / REGIONS;
  fprintf(stderr, "%.1f us per region\n", us);
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  // CHECK: on-server: 1
  printf("one device process: %d\n", pid_changes == 1);
  // CHECK-NEXT: one device process: 1
  // acc = 7 * 10000 + sum(i % 3) = 70000 + 9999
  printf("regions: %ld acc: %ld\n", x, acc);
  // CHECK-NEXT: regions: 10000 acc: 79999
  return 0;
}
