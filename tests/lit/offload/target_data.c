// target data: data stays on the device across several target regions, is
// not re-sent while present, and is copied back once at the end.
// RUN: %clang-offload %s -o %t && %run-dpu %t | FileCheck %s
#include <stdio.h>
#include <unistd.h>

#define N 512

int main(void) {
  int a[N], b[N];
  for (int i = 0; i < N; ++i) {
    a[i] = i;
    b[i] = 1;
  }
  int host_pid = getpid(), pid1 = -1, pid2 = -1, pid3 = -1;
  int seen_b = 0;

#pragma omp target data map(tofrom : a[0:N]) map(to : b[0:N])
  {
#pragma omp target map(from : pid1)
    {
      pid1 = getpid();
      for (int i = 0; i < N; ++i)
        a[i] += b[i];
    }
    // Still inside the data region: the host copy has not been updated.
    printf("host a[10] inside: %d\n", a[10]);
    // CHECK: host a[10] inside: 10

    // b is already present: changing the host copy does not reach the device.
    for (int i = 0; i < N; ++i)
      b[i] = 100;
#pragma omp target map(to : b[0:N]) map(from : pid2, seen_b)
    {
      pid2 = getpid();
      seen_b = b[7];
      for (int i = 0; i < N; ++i)
        a[i] += b[i];
    }
#pragma omp target map(from : pid3)
    {
      pid3 = getpid();
      for (int i = 0; i < N; ++i)
        a[i] *= 2;
    }
  }

  long sum = 0;
  for (int i = 0; i < N; ++i)
    sum += a[i];
  printf("on-server: %d\n", pid1 > 0 && pid1 != host_pid);
  // CHECK-NEXT: on-server: 1
  printf("same device process: %d\n", pid1 == pid2 && pid2 == pid3);
  // CHECK-NEXT: same device process: 1
  printf("device saw b[7]: %d\n", seen_b);
  // CHECK-NEXT: device saw b[7]: 1
  // a[i] = (i + 1 + 1) * 2
  printf("a[0]: %d a[511]: %d sum: %ld\n", a[0], a[N - 1], sum);
  // CHECK-NEXT: a[0]: 4 a[511]: 1026 sum: 263680
  return 0;
}
