// Target regions in atexit handlers, registered before the first region and
// after it: exit() runs the main thread's thread-local destructors before
// the handlers, and the plugin must still serve them. A thread that maps
// data and ends first hands its recycled events on.
// RUN: %clang-offload %s -o %t && %run-dpu %t | FileCheck %s
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int HostPid;

static void offload(const char *Who) {
  int X[64], Pid = -1;
  for (int I = 0; I < 64; ++I)
    X[I] = I;
#pragma omp target map(tofrom : X) map(from : Pid)
  {
    for (int I = 0; I < 64; ++I)
      X[I] += 1;
    Pid = getpid();
  }
  int Sum = 0;
  for (int I = 0; I < 64; ++I)
    Sum += X[I];
  printf("%s: sum %d on-server: %d\n", Who, Sum, Pid > 0 && Pid != HostPid);
}

static void early(void) { offload("registered before"); }
static void late(void) { offload("registered after"); }

static void *worker(void *Arg) {
  (void)Arg;
  offload("thread");
  return NULL;
}

int main(void) {
  HostPid = getpid();
  atexit(early);
  offload("main");
  pthread_t T;
  pthread_create(&T, NULL, worker, NULL);
  pthread_join(T, NULL);
  atexit(late);
  return 0;
}
// CHECK: main: sum 2080 on-server: 1
// CHECK-NEXT: thread: sum 2080 on-server: 1
// CHECK-NEXT: registered after: sum 2080 on-server: 1
// CHECK-NEXT: registered before: sum 2080 on-server: 1
