// use_device_ptr / use_device_addr: take the device address of mapped data
// on the host and hand it to regions with is_device_ptr and to
// omp_target_memcpy.
// RUN: %clang-offload %s -o %t && %run-dpu %t | FileCheck %s
#include <omp.h>
#include <stdio.h>
#include <unistd.h>

#define N 1000

int main(void) {
  int host_pid = getpid(), dev_pid = -1;
  int dev = omp_get_default_device();
  int a[N];
  int *pa = a;
  for (int i = 0; i < N; ++i)
    a[i] = i;
  int *dptr = NULL;
  long s = 0;

#pragma omp target data map(tofrom : pa[0:N])
  {
#pragma omp target data use_device_ptr(pa)
    dptr = pa;
    printf("got device pointer: %d differs from host: %d\n", dptr != NULL, dptr != a);
    // CHECK: got device pointer: 1 differs from host: 1

#pragma omp target is_device_ptr(dptr) map(from : s, dev_pid)
    {
      dev_pid = getpid();
      long t = 0;
      for (int i = 0; i < N; ++i) {
        t += dptr[i];
        dptr[i] = 2 * dptr[i];
      }
      s = t;
    }
    // Read the device copy directly, before the data region copies it back.
    int probe[3] = {0};
    omp_target_memcpy(probe, dptr, sizeof probe, 0, 10 * sizeof(int),
                      omp_get_initial_device(), dev);
    printf("device copy: %d %d %d host still: %d\n", probe[0], probe[1], probe[2], a[10]);
    // CHECK-NEXT: device copy: 20 22 24 host still: 10
  }
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  // CHECK-NEXT: on-server: 1
  printf("sum: %ld a[999]: %d\n", s, a[N - 1]);
  // CHECK-NEXT: sum: 499500 a[999]: 1998
  return 0;
}
