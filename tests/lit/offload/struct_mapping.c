// Structs with pointer members: map the struct and its pointee section
// (pointer attachment), nested structs, and arrays of structs in sections.
// RUN: %clang-offload %s -o %t && %run-dpu %t | FileCheck %s
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct tensor {
  int n, c, h, w;
  float *data;
  double scale;
};

struct pair {
  struct {
    int lo, hi;
  } range;
  long values[16];
};

int main(void) {
  int host_pid = getpid(), dev_pid = -1;
  struct tensor t = {2, 3, 4, 5, NULL, 0.5};
  int count = t.n * t.c * t.h * t.w;
  t.data = malloc(count * sizeof(float));
  for (int i = 0; i < count; ++i)
    t.data[i] = (float)i;

  double total = 0;
#pragma omp target map(to : t) map(tofrom : t.data[0:count]) map(from : total, dev_pid)
  {
    dev_pid = getpid();
    int m = t.n * t.c * t.h * t.w;
    double s = 0;
    for (int i = 0; i < m; ++i) {
      s += t.data[i];
      t.data[i] = (float)(t.data[i] * t.scale);
    }
    total = s;
  }
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  // CHECK: on-server: 1
  printf("count: %d total: %.0f data[7]: %.1f data[119]: %.1f\n", count, total,
         t.data[7], t.data[119]);
  // CHECK-NEXT: count: 120 total: 7140 data[7]: 3.5 data[119]: 59.5

  struct pair ps[10];
  for (int k = 0; k < 10; ++k) {
    ps[k].range.lo = k;
    ps[k].range.hi = k + 5;
    for (int j = 0; j < 16; ++j)
      ps[k].values[j] = 0;
  }
  // Only elements 3..6 go to the device and back.
#pragma omp target map(tofrom : ps[3:4]) map(from : dev_pid)
  {
    dev_pid = getpid();
    for (int k = 3; k < 7; ++k)
      for (int j = 0; j < 16; ++j)
        ps[k].values[j] = ps[k].range.lo * 100 + ps[k].range.hi + j;
  }
  long s = 0;
  for (int k = 0; k < 10; ++k)
    for (int j = 0; j < 16; ++j)
      s += ps[k].values[j];
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  // CHECK-NEXT: on-server: 1
  printf("pairs: %ld ps[2]: %ld ps[3]: %ld ps[6]: %ld ps[7]: %ld\n", s,
         ps[2].values[0], ps[3].values[0], ps[6].values[15], ps[7].values[0]);
  // CHECK-NEXT: pairs: 29888 ps[2]: 0 ps[3]: 308 ps[6]: 626 ps[7]: 0
  free(t.data);
  return 0;
}
