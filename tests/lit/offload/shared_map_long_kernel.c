// Two host threads map the same array. The first maps it (its copy leaves
// with the region's launch, in one Batch) and runs a kernel that spins until
// the second thread's region has run. The second finds the array mapped and
// waits, through libomptarget's map event, for the first thread's copy: not
// for the first region's kernel, which would wait for it in turn (a
// deadlock, failed by the lit time limit).
// RUN: %clang-offload %s -o %t -lpthread && %run-dpu %t | FileCheck %s
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#pragma omp declare target
volatile int go = 0;
#pragma omp end declare target

static long shared_data[64];
static int host_pid;
// What each thread's region saw; printed by main, in a fixed order (the two
// regions end at about the same moment).
static long sums[2];
static int pids[2];

static void *first(void *out) {
  long sum = 0;
  int pid = -1;
#pragma omp target map(to : shared_data) map(from : sum, pid)
  {
    pid = getpid();
    while (!go)
      ;
    for (int i = 0; i < 64; ++i)
      sum += shared_data[i];
  }
  sums[0] = sum;
  pids[0] = pid;
  return out;
}

static void *second(void *out) {
  usleep(300 * 1000); // the first region is running by now
  long sum = 0;
  int pid = -1;
#pragma omp target map(to : shared_data) map(from : sum, pid)
  {
    pid = getpid();
    for (int i = 0; i < 64; ++i)
      sum += shared_data[i];
    go = 1;
  }
  sums[1] = sum;
  pids[1] = pid;
  return out;
}

int main(void) {
  host_pid = getpid();
  for (int i = 0; i < 64; ++i)
    shared_data[i] = i;
  // Connect and load the image before the threads start.
  int warm = 0;
#pragma omp target map(from : warm)
  warm = 1;
  pthread_t a, b;
  pthread_create(&a, NULL, first, NULL);
  pthread_create(&b, NULL, second, NULL);
  pthread_join(b, NULL);
  pthread_join(a, NULL);
  for (int t = 0; t < 2; ++t)
    printf("%s: sum %ld on-server %d\n", t ? "second" : "first", sums[t],
           pids[t] > 0 && pids[t] != host_pid);
  // CHECK: first: sum 2016 on-server 1
  // CHECK-NEXT: second: sum 2016 on-server 1
  printf("warm %d\n", warm);
  // CHECK-NEXT: warm 1
  return 0;
}
