// Structs with pointer members mapped back to the host: after `target exit
// data map(from: ...)` and `target update from(...)` the host's pointers
// must be the host's again (libomptarget restores them from shadow copies
// right after its retrieve call, before it synchronizes: a retrieve that
// landed later overwrote them with the device's, and the next host access
// crashed). Also for structs in an array (declare mapper:
// struct_pointers_mapper.cpp).
// RUN: %clang-offload %s -o %t && %run-dpu %t | FileCheck %s
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define N 10

struct T {
  int a;
  int *p;
};
struct S {
  int b;
  struct T t;
};

int main(void) {
  int host_pid = getpid(), dev_pid = -1;

  // The example: enter data, a region updates the pointee, exit data from.
  struct S s = {1, {2, malloc(N * sizeof(int))}};
  int *orig = s.t.p;
  for (int i = 0; i < N; ++i)
    s.t.p[i] = i;
#pragma omp target enter data map(to : s, s.t.p[:N])
#pragma omp target map(from : dev_pid)
  {
    dev_pid = getpid();
    for (int i = 0; i < N; ++i)
      s.t.p[i] += 100;
    s.b = 5;
  }
#pragma omp target exit data map(from : s, s.t.p[:N])
  // CHECK: exit data: pointer kept 1 b 5 a 2 p[3] 103
  printf("exit data: pointer kept %d b %d a %d p[3] %d\n", s.t.p == orig, s.b,
         s.t.a, s.t.p == orig ? s.t.p[3] : -1);

  // target update from: the struct stays mapped, its copy comes back twice.
  struct S u = {7, {8, malloc(N * sizeof(int))}};
  int *uorig = u.t.p;
  for (int i = 0; i < N; ++i)
    u.t.p[i] = -i;
#pragma omp target data map(tofrom : u, u.t.p[:N])
  {
    for (int round = 0; round < 2; ++round) {
#pragma omp target
      {
        u.b += 1;
        u.t.p[2] += 10;
      }
#pragma omp target update from(u)
#pragma omp target update from(u.t.p[:N])
      printf("update %d: pointer kept %d b %d p[2] %d\n", round, u.t.p == uorig,
             u.b, u.t.p == uorig ? u.t.p[2] : -1);
    }
  }
  // CHECK-NEXT: update 0: pointer kept 1 b 8 p[2] 8
  // CHECK-NEXT: update 1: pointer kept 1 b 9 p[2] 18
  // CHECK-NEXT: after data: pointer kept 1 b 9 p[2] 18
  printf("after data: pointer kept %d b %d p[2] %d\n", u.t.p == uorig, u.b,
         u.t.p == uorig ? u.t.p[2] : -1);

  // An array of structs, each with its own pointee.
  struct T arr[3];
  int *keep[3];
  for (int k = 0; k < 3; ++k) {
    arr[k].a = k;
    arr[k].p = keep[k] = malloc(N * sizeof(int));
    for (int i = 0; i < N; ++i)
      arr[k].p[i] = k * 100 + i;
  }
#pragma omp target enter data map(to                                           \
                                  : arr, arr[0].p[:N], arr[1].p                \
                                  [:N], arr[2].p                               \
                                  [:N])
#pragma omp target
  for (int k = 0; k < 3; ++k) {
    arr[k].a += 10;
    arr[k].p[1] = -arr[k].p[1];
  }
#pragma omp target exit data map(from                                          \
                                 : arr, arr[0].p[:N], arr[1].p                 \
                                 [:N], arr[2].p                                \
                                 [:N])
  int kept = 1, sum = 0;
  for (int k = 0; k < 3; ++k) {
    kept &= arr[k].p == keep[k];
    sum += arr[k].a + (arr[k].p == keep[k] ? arr[k].p[1] : 0);
  }
  // CHECK-NEXT: array: pointers kept 1 sum -270
  printf("array: pointers kept %d sum %d\n", kept, sum);

  // CHECK-NEXT: on-server: 1
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  free(orig);
  free(uorig);
  return 0;
}
