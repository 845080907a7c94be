// The link model of `ompdpu-vm start --netem` (a VM of this test's own, netem "delay 5ms"
// on both directions of its link): every synchronous target region costs at least one
// round trip, so at least 10 ms, where the plain testbed link takes well under that.
// RUN: %clang-offload %s -o %t
// RUN: %vm-fault --private-vm netem --netem "delay 5ms" -- %t | FileCheck %s
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define REGIONS 10

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

int main(void) {
  int host_pid = getpid(), dev_pid = -1;
#pragma omp target map(from : dev_pid)
  dev_pid = getpid();
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  // CHECK: on-server: 1
  double fastest = 1e9;
  int x = 0;
  for (int r = 0; r < REGIONS; ++r) {
    double t0 = now_s();
#pragma omp target map(tofrom : x)
    x += 1;
    double dt = now_s() - t0;
    if (dt < fastest)
      fastest = dt;
  }
  printf("x: %d\n", x);
  // CHECK-NEXT: x: 10
  printf("fastest region at least one delayed round trip: %d\n", fastest >= 0.010);
  // CHECK-NEXT: fastest region at least one delayed round trip: 1
  fprintf(stderr, "fastest region: %.2f ms\n", fastest * 1e3);
  return 0;
}
// CHECK: exit-status: 0
