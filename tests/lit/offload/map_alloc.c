// map(alloc:): device-only scratch storage, never copied either way.
// RUN: %clang-offload %s -o %t && %run-dpu %t | FileCheck %s
#include <stdio.h>
#include <unistd.h>

#define N 10000

int main(void) {
  static long scratch[N];
  static long prefix[N];
  for (int i = 0; i < N; ++i)
    scratch[i] = -1;
  int host_pid = getpid(), dev_pid = -1;

#pragma omp target map(alloc : scratch[0:N]) map(from : prefix[0:N], dev_pid)
  {
    dev_pid = getpid();
    for (int i = 0; i < N; ++i)
      scratch[i] = i + 1;
    long s = 0;
    for (int i = 0; i < N; ++i) {
      s += scratch[i];
      prefix[i] = s;
    }
  }

  int untouched = 1;
  for (int i = 0; i < N; ++i)
    if (scratch[i] != -1)
      untouched = 0;
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  // CHECK: on-server: 1
  printf("prefix: %ld %ld %ld\n", prefix[0], prefix[99], prefix[N - 1]);
  // CHECK-NEXT: prefix: 1 5050 50005000
  printf("host scratch untouched: %d\n", untouched);
  // CHECK-NEXT: host scratch untouched: 1

  // alloc inside a data region keeps its device contents between regions.
  long out = 0;
#pragma omp target data map(alloc : scratch[0:N])
  {
#pragma omp target
    for (int i = 0; i < N; ++i)
      scratch[i] = 2 * i;
#pragma omp target map(from : out, dev_pid)
    {
      dev_pid = getpid();
      long s = 0;
      for (int i = 0; i < N; ++i)
        s += scratch[i];
      out = s;
    }
  }
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  // CHECK-NEXT: on-server: 1
  printf("out: %ld host scratch[5]: %ld\n", out, scratch[5]);
  // CHECK-NEXT: out: 99990000 host scratch[5]: -1
  return 0;
}
