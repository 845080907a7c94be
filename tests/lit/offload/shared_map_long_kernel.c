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
  printf("first: sum %ld on-server %d\n", sum, pid > 0 && pid != host_pid);
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
  printf("second: sum %ld on-server %d\n", sum, pid > 0 && pid != host_pid);
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
  // CHECK: second: sum 2016 on-server 1
  // CHECK: first: sum 2016 on-server 1
  printf("warm %d\n", warm);
  // CHECK: warm 1
  return 0;
}
