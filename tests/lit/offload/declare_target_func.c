// declare target functions: recursion, static functions, function pointers,
// libm and libc calls, a function declared with `declare target to(...)`.
// RUN: %clang-offload %s -o %t -lm && %run-dpu %t | FileCheck %s
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#pragma omp declare target
int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
static int square(int x) { return x * x; }
static int cube(int x) { return x * x * x; }
typedef int (*unary)(int);
int apply_all(int x) {
  unary fns[2] = {square, cube};
  int s = 0;
  for (int i = 0; i < 2; ++i)
    s += fns[i](x);
  return s;
}
int whoami(void) { return getpid(); }
#pragma omp end declare target

long gcd(long a, long b);
#pragma omp declare target to(gcd)
long gcd(long a, long b) { return b ? gcd(b, a % b) : a; }

int main(void) {
  int host_pid = getpid(), dev_pid = -1;
  int f = 0, ap = 0;
  long g = 0;
  long root = 0;
  size_t len = 0;

#pragma omp target map(from : f, ap, g, root, len, dev_pid)
  {
    dev_pid = whoami();
    f = fib(20);
    ap = apply_all(7);
    g = gcd(1071, 462);
    root = (long)(sqrt(2.0) * 1e6);
    len = strlen("BlueField-2");
  }
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  // CHECK: on-server: 1
  printf("fib(20): %d apply_all(7): %d gcd: %ld\n", f, ap, g);
  // CHECK-NEXT: fib(20): 6765 apply_all(7): 392 gcd: 21
  printf("sqrt: %ld strlen: %zu\n", root, len);
  // CHECK-NEXT: sqrt: 1414213 strlen: 11
  return 0;
}
