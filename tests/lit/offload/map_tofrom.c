// map(tofrom:) of scalars, arrays, array sections and structs, and the
// implicit tofrom of scalars referenced in a target region.
// RUN: %clang-offload %s -o %t && %run-dpu %t | FileCheck %s
#include <stdio.h>
#include <unistd.h>

struct point {
  int x, y;
  double w;
};

int main(void) {
  int x = 41;
  int a[100];
  int b[1000];
  struct point p = {1, 2, 0.25};
  for (int i = 0; i < 100; ++i)
    a[i] = i;
  for (int i = 0; i < 1000; ++i)
    b[i] = 1;
  int host_pid = getpid(), dev_pid = -1;

#pragma omp target map(tofrom : x, a, p, b[100:200]) map(from : dev_pid)
  {
    dev_pid = getpid();
    x += 1;
    for (int i = 0; i < 100; ++i)
      a[i] *= 2;
    p.x += 10;
    p.y *= 3;
    p.w *= 4;
    for (int i = 100; i < 300; ++i)
      b[i] = i;
  }

  long asum = 0, bsum = 0;
  for (int i = 0; i < 100; ++i)
    asum += a[i];
  for (int i = 0; i < 1000; ++i)
    bsum += b[i];
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  // CHECK: on-server: 1
  printf("x: %d asum: %ld\n", x, asum);
  // CHECK-NEXT: x: 42 asum: 9900
  printf("p: %d %d %.2f\n", p.x, p.y, p.w);
  // CHECK-NEXT: p: 11 6 1.00
  // b[0..99] and b[300..999] stay 1 (800), b[100..299] = sum(100..299) = 39900
  printf("bsum: %ld b99: %d b100: %d b299: %d b300: %d\n", bsum, b[99], b[100],
         b[299], b[300]);
  // CHECK-NEXT: bsum: 40700 b99: 1 b100: 100 b299: 299 b300: 1

  // Implicit mapping: a scalar is firstprivate, an array is tofrom.
  int y = 5;
  int c[4] = {1, 2, 3, 4};
#pragma omp target map(from : dev_pid)
  {
    dev_pid = getpid();
    for (int i = 0; i < 4; ++i)
      c[i] += y;
  }
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  // CHECK-NEXT: on-server: 1
  printf("c: %d %d %d %d\n", c[0], c[1], c[2], c[3]);
  // CHECK-NEXT: c: 6 7 8 9
  return 0;
}
