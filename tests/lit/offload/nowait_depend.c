// Asynchronous target regions: nowait with depend(out/inout/in) ordering,
// independent regions in flight together, taskwait, and a long dependent
// chain.
// RUN: %clang-offload %s -o %t && %run-dpu %t | FileCheck %s
#include <omp.h>
#include <stdio.h>
#include <unistd.h>

#define N 4096
#define CHAIN 50

int main(void) {
  static int a[N], b[N], c[N];
  int host_pid = getpid();
  int pid_a = -1, pid_b = -1, pid_c = -1;
  int counter = 0;

#pragma omp parallel num_threads(2)
#pragma omp single
  {
#pragma omp target map(from : a[0:N], pid_a) nowait depend(out : a)
    {
      pid_a = getpid();
      for (int i = 0; i < N; ++i)
        a[i] = i;
    }
#pragma omp target map(tofrom : a[0:N]) nowait depend(inout : a)
    for (int i = 0; i < N; ++i)
      a[i] *= 2;
#pragma omp target map(from : b[0:N], pid_b) nowait depend(out : b)
    {
      pid_b = getpid();
      for (int i = 0; i < N; ++i)
        b[i] = 1;
    }
#pragma omp target map(to : a[0:N], b[0:N]) map(from : c[0:N], pid_c) nowait \
    depend(in : a, b) depend(out : c)
    {
      pid_c = getpid();
      for (int i = 0; i < N; ++i)
        c[i] = a[i] + b[i];
    }
#pragma omp taskwait

    // A chain of dependent regions, each one reading the previous value.
    for (int k = 0; k < CHAIN; ++k) {
#pragma omp target map(tofrom : counter) nowait depend(inout : counter)
      counter = counter * 2 % 1000003 + k;
    }
#pragma omp taskwait
  }

  long sa = 0, sc = 0;
  for (int i = 0; i < N; ++i) {
    sa += a[i];
    sc += c[i];
  }
  long expect = 0;
  for (int k = 0; k < CHAIN; ++k)
    expect = expect * 2 % 1000003 + k;
  printf("on-server: %d\n", pid_a > 0 && pid_a != host_pid && pid_a == pid_b &&
                                pid_b == pid_c);
  // CHECK: on-server: 1
  printf("sum a: %ld sum c: %ld c[10]: %d\n", sa, sc, c[10]);
  // CHECK-NEXT: sum a: 16773120 sum c: 16777216 c[10]: 21
  printf("chain: %d expected: %ld\n", counter, expect);
  // CHECK-NEXT: chain: 152986 expected: 152986
  return 0;
}
