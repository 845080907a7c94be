// Inside a region, omp_get_device_num() and omp_get_num_devices() answer
// for the DPU it runs on, as on a GPU: its number and the DPUs' count, in
// every thread of a parallel region and in nowait regions on both DPUs at
// once. (The server's libomp alone says 0 and 0.)
// RUN: %clang-offload %s -o %t && %run-dpu2 %t | FileCheck %s
#include <omp.h>
#include <ompdpu.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
  int n = ompdpu_num_devices();
  printf("dpus: %d\n", n);
  // CHECK: dpus: 2
  int host_pid = getpid();
  for (int k = 0; k < n; ++k) {
    int dev = ompdpu_device(k);
    int num = -1, count = -1, pid = -1, disagree = -1;
#pragma omp target device(dev) map(from : num, count, pid, disagree)
    {
      num = omp_get_device_num();
      count = omp_get_num_devices();
      pid = getpid();
      int bad = 0;
#pragma omp parallel num_threads(4) reduction(+ : bad)
      bad += omp_get_device_num() != num || omp_get_num_devices() != count;
      disagree = bad;
    }
    printf("dpu %d: its number %d, count %d, disagreeing %d, on server %d\n", k,
           num == dev, count, disagree, pid > 0 && pid != host_pid);
  }
  // CHECK-NEXT: dpu 0: its number 1, count 2, disagreeing 0, on server 1
  // CHECK-NEXT: dpu 1: its number 1, count 2, disagreeing 0, on server 1

  int seen[2] = {-1, -1};
  for (int k = 0; k < 2; ++k) {
    int dev = ompdpu_device(k);
#pragma omp target device(dev) map(from : seen [k:1]) nowait
    seen[k] = omp_get_device_num();
  }
#pragma omp taskwait
  printf("nowait: %d %d\n", seen[0] == ompdpu_device(0),
         seen[1] == ompdpu_device(1));
  // CHECK-NEXT: nowait: 1 1
  return 0;
}
