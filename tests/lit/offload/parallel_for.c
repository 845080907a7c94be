// `parallel for` inside a target region runs on the server's cores: every
// iteration is done once, and more than one thread takes part when the
// server has more than one core (a 1-core server passes with one thread).
// RUN: %clang-offload %s -o %t && %run-dpu %t | FileCheck %s
#include <omp.h>
#include <stdio.h>
#include <unistd.h>

#define N 200000
#define MAXT 256

int main(void) {
  static int a[N];
  static int hits[N];
  int host_pid = getpid(), dev_pid = -1;
  int procs = 0, team_size = 0, distinct = 0, in_parallel = -1;

#pragma omp target map(from : a[0:N], hits[0:N], dev_pid, procs, team_size, distinct, in_parallel)
  {
    dev_pid = getpid();
    procs = omp_get_num_procs();
    int used[MAXT] = {0};
    distinct = 0;
    for (int i = 0; i < N; ++i)
      hits[i] = 0;
#pragma omp parallel for schedule(static, 1000)
    for (int i = 0; i < N; ++i) {
      a[i] = 2 * i + 1;
      hits[i] += 1;
      int t = omp_get_thread_num();
      if (t < MAXT)
        used[t] = 1; // benign race: every writer stores 1
    }
#pragma omp parallel
    {
#pragma omp single
      {
        team_size = omp_get_num_threads();
        in_parallel = omp_in_parallel();
      }
    }
    for (int t = 0; t < MAXT; ++t)
      distinct += used[t];
  }

  long sum = 0;
  int bad = 0;
  for (int i = 0; i < N; ++i) {
    sum += a[i];
    if (hits[i] != 1 || a[i] != 2 * i + 1)
      ++bad;
  }
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  // CHECK: on-server: 1
  printf("sum: %ld bad: %d\n", sum, bad);
  // CHECK-NEXT: sum: 40000000000 bad: 0
  printf("in parallel: %d\n", in_parallel);
  // CHECK-NEXT: in parallel: 1
  int ok = procs > 1 ? (distinct > 1 && team_size > 1) : (distinct >= 1 && team_size >= 1);
  printf("threads-ok: %d\n", ok);
  // CHECK-NEXT: threads-ok: 1
  fprintf(stderr, "server procs: %d team size: %d distinct threads: %d\n", procs,
          team_size, distinct);

  // The combined construct, with an explicit thread count.
  static double x[N];
  int nthreads = 0;
#pragma omp target parallel for num_threads(2) map(from : x[0:N], nthreads, dev_pid)
  for (int i = 0; i < N; ++i) {
    x[i] = i * 0.5;
    if (i == 0) {
      nthreads = omp_get_num_threads();
      dev_pid = getpid();
    }
  }
  double xs = 0;
  for (int i = 0; i < N; ++i)
    xs += x[i];
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  // CHECK-NEXT: on-server: 1
  printf("xs: %.1f threads-ok: %d\n", xs, procs > 1 ? nthreads == 2 : nthreads >= 1);
  // CHECK-NEXT: xs: 9999950000.0 threads-ok: 1
  return 0;
}
