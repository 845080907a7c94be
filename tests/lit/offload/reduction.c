// Reductions in target regions: teams distribute parallel for with +, max
// and min, and a parallel for reduction nested in a plain target region.
// RUN: %clang-offload %s -o %t && %run-dpu %t | FileCheck %s
#include <omp.h>
#include <stdio.h>
#include <unistd.h>

#define N 1000000

int main(void) {
  static int v[N];
  for (int i = 0; i < N; ++i)
    v[i] = (int)((i * 7919L) % 100003) - 50000;
  int host_pid = getpid(), dev_pid = -1;

  long long sum = 0;
  int mx = -1000000, mn = 1000000;
#pragma omp target teams distribute parallel for map(to : v[0:N]) \
    reduction(+ : sum) reduction(max : mx) reduction(min : mn)
  for (int i = 0; i < N; ++i) {
    sum += i + 1;
    if (v[i] > mx)
      mx = v[i];
    if (v[i] < mn)
      mn = v[i];
  }
  printf("sum: %lld max: %d min: %d\n", sum, mx, mn);
  // CHECK: sum: 500000500000 max: 50002 min: -50000

  long long vs = 0;
  int threads = 0, procs = 0;
#pragma omp target map(to : v[0:N]) map(tofrom : vs) map(from : threads, procs, dev_pid)
  {
    dev_pid = getpid();
    procs = omp_get_num_procs();
#pragma omp parallel for reduction(+ : vs) reduction(max : threads)
    for (int i = 0; i < N; ++i) {
      vs += v[i];
      int t = omp_get_num_threads();
      if (t > threads)
        threads = t;
    }
  }
  long long expect = 0;
  for (int i = 0; i < N; ++i)
    expect += v[i];
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  // CHECK-NEXT: on-server: 1
  printf("vs: %lld matches host: %d\n", vs, vs == expect);
  // CHECK-NEXT: vs: 882206 matches host: 1
  printf("threads-ok: %d\n", procs > 1 ? threads > 1 : threads >= 1);
  // CHECK-NEXT: threads-ok: 1

  // A product and a logical-and reduction.
  double prod = 1.0;
  int all_pos = 1;
#pragma omp target parallel for reduction(* : prod) reduction(&& : all_pos)
  for (int i = 1; i <= 20; ++i) {
    prod *= i;
    all_pos = all_pos && (i > 0);
  }
  printf("20!: %.0f all_pos: %d\n", prod, all_pos);
  // CHECK-NEXT: 20!: 2432902008176640000 all_pos: 1
  return 0;
}
