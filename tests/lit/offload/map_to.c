// map(to:): the array reaches the device, device-side writes do not come back.
// RUN: %clang-offload %s -o %t && %run-dpu %t | FileCheck %s
#include <stdio.h>
#include <unistd.h>

#define N 1000

int main(void) {
  static int a[N];
  for (int i = 0; i < N; ++i)
    a[i] = 3 * i + 1;
  int host_pid = getpid(), dev_pid = -1;
  long sum = 0;
  int first = 0, last = 0;

#pragma omp target map(to : a[0:N]) map(from : sum, first, last, dev_pid)
  {
    dev_pid = getpid();
    long s = 0;
    for (int i = 0; i < N; ++i)
      s += a[i];
    sum = s;
    first = a[0];
    last = a[N - 1];
    a[0] = -1; // must not reach the host: map(to:) only
  }

  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  // CHECK: on-server: 1
  printf("sum: %ld\n", sum);
  // CHECK-NEXT: sum: 1499500
  printf("first: %d last: %d\n", first, last);
  // CHECK-NEXT: first: 1 last: 2998
  printf("host a[0]: %d\n", a[0]);
  // CHECK-NEXT: host a[0]: 1
  return 0;
}
