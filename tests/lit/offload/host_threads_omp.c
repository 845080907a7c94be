// Four host OpenMP threads, each with its own target regions (sync and
// nowait), its own device allocation and its own enter/exit data, at once.
// RUN: %clang-offload %s -o %t && %run-dpu %t | FileCheck %s
#include <omp.h>
#include <stdio.h>
#include <unistd.h>

#define T 4
#define N 4096
#define ROUNDS 50

int main(void) {
  int host_pid = getpid();
  static double data[T][N];
  long sums[T] = {0};
  int pids[T] = {0};
  int nthreads = 0;

#pragma omp parallel num_threads(T)
  {
    int t = omp_get_thread_num();
#pragma omp single
    nthreads = omp_get_num_threads();
    double *d = data[t];
    for (int i = 0; i < N; ++i)
      d[i] = t;
    int pid = -1;
#pragma omp target enter data map(to : d[0:N])
    for (int r = 0; r < ROUNDS; ++r) {
#pragma omp target map(from : pid) nowait
      {
        pid = getpid();
        for (int i = 0; i < N; ++i)
          d[i] += 1.0;
      }
#pragma omp taskwait
    }
#pragma omp target exit data map(from : d[0:N])
    long *scratch = (long *)omp_target_alloc(sizeof(long), omp_get_default_device());
    long s = 0;
#pragma omp target is_device_ptr(scratch) map(to : d[0:N]) map(from : s)
    {
      *scratch = 0;
      for (int i = 0; i < N; ++i)
        *scratch += (long)d[i];
      s = *scratch;
    }
    omp_target_free(scratch, omp_get_default_device());
    sums[t] = s;
    pids[t] = pid;
  }

  int on_server = 1;
  for (int t = 0; t < T; ++t)
    on_server = on_server && pids[t] > 0 && pids[t] != host_pid;
  printf("host threads: %d\n", nthreads);
  // CHECK: host threads: 4
  printf("on-server: %d\n", on_server);
  // CHECK-NEXT: on-server: 1
  for (int t = 0; t < T; ++t)
    printf("thread %d: %ld\n", t, sums[t]);
  // (t + 50) * 4096
  // CHECK-NEXT: thread 0: 204800
  // CHECK-NEXT: thread 1: 208896
  // CHECK-NEXT: thread 2: 212992
  // CHECK-NEXT: thread 3: 217088
  return 0;
}
