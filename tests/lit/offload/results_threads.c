// Four host threads run the same region (one kernel) at once, each with its
// own arrays, and each retrieves a result at its own offset: 0 and 1 for
// two threads each. A barrier after every region keeps them in step. The
// plugin learns one prediction per kernel, so the threads keep overwriting
// each other's: some regions take the asked bytes, others retrieve as asked
// (how many of each depends on the schedule). Every value must be right
// either way.
// RUN: %clang-offload %s -o %t -lpthread
// RUN: env OMPDPU_TRACE=1 %run-dpu %t 2>%t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=TRACE --implicit-check-not='ompdpu info' < %t.err
// CHECK: on-server: 1
// CHECK-NEXT: wrong: 0
// TRACE: ompdpu trace: device {{[0-9]+}} ({{.*}}): results asked for with their launch: {{[0-9]+}} taken, {{[0-9]+}} not
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

enum { kThreads = 4, kRegions = 300 };

static int dev_pid[kThreads];
static pthread_barrier_t step;
static int wrong[kThreads];

static void region(long *in, long *out, int k, int r, int *pid) {
#pragma omp target map(to : in[0 : 4]) map(from : out[k : 1], pid[0 : 1])
  {
    pid[0] = getpid();
    out[k] = in[0] + in[1] + in[2] + in[3] + r;
  }
}

static void *worker(void *arg) {
  int t = (int)(long)arg, k = t % 2;
  long in[4], out[2];
  for (int r = 0; r < kRegions; ++r) {
    for (int i = 0; i < 4; ++i)
      in[i] = 1000 * t + i;
    out[0] = out[1] = -1;
    region(in, out, k, r, &dev_pid[t]);
    // 4000t + 6 + r in out[k]; the other element untouched.
    wrong[t] += out[k] != 4000L * t + 6 + r || out[1 - k] != -1;
    pthread_barrier_wait(&step);
  }
  return NULL;
}

int main(void) {
  pthread_t th[kThreads];
  pthread_barrier_init(&step, NULL, kThreads);
  for (long t = 0; t < kThreads; ++t)
    pthread_create(&th[t], NULL, worker, (void *)t);
  int on_server = 1, bad = 0;
  for (int t = 0; t < kThreads; ++t) {
    pthread_join(th[t], NULL);
    on_server &= dev_pid[t] > 0 && dev_pid[t] != getpid();
    bad += wrong[t];
  }
  printf("on-server: %d\n", on_server);
  printf("wrong: %d\n", bad);
  return 0;
}
