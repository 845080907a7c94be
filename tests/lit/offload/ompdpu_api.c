// The public ompdpu API: ompdpu_num_devices() and ompdpu_device(k), used to
// pick the DPU in device() clauses and omp_* device routines.
// RUN: %clang-offload %s -o %t && %run-dpu %t | FileCheck %s
#include <omp.h>
#include <ompdpu.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
  int n = ompdpu_num_devices();
  printf("dpus: %d\n", n);
  // CHECK: dpus: 1
  int dpu = ompdpu_device(0);
  printf("device(0) valid: %d in range: %d\n", dpu >= 0, dpu < omp_get_num_devices());
  // CHECK-NEXT: device(0) valid: 1 in range: 1
  printf("device(1): %d device(-1): %d device(100): %d\n", ompdpu_device(1),
         ompdpu_device(-1), ompdpu_device(100));
  // CHECK-NEXT: device(1): -1 device(-1): -1 device(100): -1
  printf("stable: %d\n", ompdpu_device(0) == dpu && ompdpu_num_devices() == n);
  // CHECK-NEXT: stable: 1

  int host_pid = getpid(), dev_pid = -1, initial = -1;
  int v = 20;
#pragma omp target device(dpu) map(tofrom : v) map(from : dev_pid, initial)
  {
    dev_pid = getpid();
    initial = omp_is_initial_device();
    v += 22;
  }
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  // CHECK-NEXT: on-server: 1
  printf("initial device inside: %d v: %d\n", initial, v);
  // CHECK-NEXT: initial device inside: 0 v: 42

  // The same device through the default-device ICV.
  omp_set_default_device(dpu);
  printf("default: %d\n", omp_get_default_device() == dpu);
  // CHECK-NEXT: default: 1
  int pid2 = -1;
#pragma omp target map(from : pid2)
  pid2 = getpid();
  printf("same server: %d\n", pid2 == dev_pid);
  // CHECK-NEXT: same server: 1

  // Memory routines addressed through ompdpu_device().
  int *p = (int *)omp_target_alloc(64 * sizeof(int), dpu);
  int host[64];
  for (int i = 0; i < 64; ++i)
    host[i] = i;
  omp_target_memcpy(p, host, sizeof host, 0, 0, dpu, omp_get_initial_device());
  int s = 0;
#pragma omp target device(dpu) is_device_ptr(p) map(from : s)
  {
    int t = 0;
    for (int i = 0; i < 64; ++i)
      t += p[i];
    s = t;
  }
  omp_target_free(p, dpu);
  printf("sum via ompdpu_device: %d\n", s);
  // CHECK-NEXT: sum via ompdpu_device: 2016
  return 0;
}
