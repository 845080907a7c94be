// firstprivate scalars and structs: the device gets a copy, changes stay there.
// RUN: %clang-offload %s -o %t && %run-dpu %t | FileCheck %s
#include <stdio.h>
#include <unistd.h>

struct config {
  int n;
  double factor;
  char name[16];
  long weights[4];
};

int main(void) {
  int k = 7;
  double d = 2.5;
  long big = 1L << 40;
  char c = 'x';
  struct config cfg = {3, 0.5, "conv3x3", {10, 20, 30, 40}};
  int host_pid = getpid(), dev_pid = -1;
  long r1 = 0, r2 = 0;
  double r3 = 0;
  char seen_name[16] = {0};

#pragma omp target firstprivate(k, d, big, c, cfg) map(from : r1, r2, r3, seen_name, dev_pid)
  {
    dev_pid = getpid();
    r1 = k * 100 + (long)(d * 10) + (big >> 40) + (c == 'x');
    long w = 0;
    for (int i = 0; i < 4; ++i)
      w += cfg.weights[i] * (i + 1);
    r2 = w + cfg.n;
    r3 = cfg.factor * d;
    for (int i = 0; i < 16; ++i)
      seen_name[i] = cfg.name[i];
    // Private changes: must not reach the host.
    k = -1;
    d = -1;
    cfg.n = -1;
    cfg.weights[0] = -1;
    cfg.name[0] = 'X';
  }
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  // CHECK: on-server: 1
  printf("r1: %ld r2: %ld r3: %.2f name: %s\n", r1, r2, r3, seen_name);
  // CHECK-NEXT: r1: 727 r2: 303 r3: 1.25 name: conv3x3
  printf("host k: %d d: %.1f cfg.n: %d w0: %ld name: %s\n", k, d, cfg.n,
         cfg.weights[0], cfg.name);
  // CHECK-NEXT: host k: 7 d: 2.5 cfg.n: 3 w0: 10 name: conv3x3

  // Scalars used in a region without a clause are firstprivate by default.
  int m = 12;
  int out = 0;
#pragma omp target map(from : out, dev_pid)
  {
    dev_pid = getpid();
    out = m * m;
    m = 0;
  }
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  // CHECK-NEXT: on-server: 1
  printf("out: %d host m: %d\n", out, m);
  // CHECK-NEXT: out: 144 host m: 12
  return 0;
}
