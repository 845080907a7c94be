// target update to/from, whole arrays and sections, inside a data region.
// RUN: %clang-offload %s -o %t && %run-dpu %t | FileCheck %s
#include <stdio.h>
#include <unistd.h>

#define N 1000

int main(void) {
  int a[N];
  for (int i = 0; i < N; ++i)
    a[i] = 1;
  int host_pid = getpid(), dev_pid = -1;
  long dev_sum = 0;

#pragma omp target data map(to : a[0:N])
  {
    for (int i = 0; i < N; ++i)
      a[i] = i; // host-only change
#pragma omp target map(from : dev_sum)
    {
      long s = 0;
      for (int i = 0; i < N; ++i)
        s += a[i];
      dev_sum = s;
    }
    printf("device sum before update: %ld\n", dev_sum);
    // CHECK: device sum before update: 1000

#pragma omp target update to(a[0:N])
#pragma omp target map(from : dev_sum, dev_pid)
    {
      dev_pid = getpid();
      long s = 0;
      for (int i = 0; i < N; ++i) {
        s += a[i];
        a[i] *= 3;
      }
      dev_sum = s;
    }
    printf("device sum after update: %ld\n", dev_sum);
    // CHECK-NEXT: device sum after update: 499500

    // Bring back only the first half.
#pragma omp target update from(a[0:N/2])
    printf("a[1]: %d a[499]: %d a[500]: %d a[999]: %d\n", a[1], a[499], a[500],
           a[999]);
    // CHECK-NEXT: a[1]: 3 a[499]: 1497 a[500]: 500 a[999]: 999

    // A section in the middle of the array, to the device and back.
    for (int i = 200; i < 210; ++i)
      a[i] = -i;
#pragma omp target update to(a[200:10])
#pragma omp target
    for (int i = 200; i < 210; ++i)
      a[i] *= 10;
#pragma omp target update from(a[200:10])
    printf("a[199]: %d a[200]: %d a[209]: %d a[210]: %d\n", a[199], a[200],
           a[209], a[210]);
    // CHECK-NEXT: a[199]: 597 a[200]: -2000 a[209]: -2090 a[210]: 630
  }
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  // CHECK-NEXT: on-server: 1
  return 0;
}
