// Two DPUs in one program: each device is its own server process, memory
// allocated with omp_target_alloc on both, a device-to-device
// omp_target_memcpy from ompdpu_device(0) to ompdpu_device(1), and regions
// on both devices running concurrently.
// RUN: %clang-offload %s -o %t && %run-dpu2 %t | FileCheck %s
#include <omp.h>
#include <ompdpu.h>
#include <stdio.h>
#include <unistd.h>

#define N (1 << 20)

int main(void) {
  int host_pid = getpid();
  printf("dpus: %d\n", ompdpu_num_devices());
  // CHECK: dpus: 2
  int d0 = ompdpu_device(0), d1 = ompdpu_device(1);
  printf("valid: %d distinct: %d third: %d\n", d0 >= 0 && d1 >= 0, d0 != d1,
         ompdpu_device(2));
  // CHECK-NEXT: valid: 1 distinct: 1 third: -1

  int pid0 = -1, pid1 = -1;
#pragma omp target device(d0) map(from : pid0)
  pid0 = getpid();
#pragma omp target device(d1) map(from : pid1)
  pid1 = getpid();
  printf("on-server: %d\n", pid0 > 0 && pid1 > 0 && pid0 != host_pid && pid1 != host_pid);
  // CHECK-NEXT: on-server: 1
  printf("different servers: %d\n", pid0 != pid1);
  // CHECK-NEXT: different servers: 1

  size_t bytes = N * sizeof(int);
  int *p0 = (int *)omp_target_alloc(bytes, d0);
  int *p1 = (int *)omp_target_alloc(bytes, d1);
  printf("allocated: %d\n", p0 != NULL && p1 != NULL);
  // CHECK-NEXT: allocated: 1

#pragma omp target device(d0) is_device_ptr(p0)
  for (int i = 0; i < N; ++i)
    p0[i] = i % 1000;
#pragma omp target device(d1) is_device_ptr(p1)
  for (int i = 0; i < N; ++i)
    p1[i] = -1;

  // device 0 -> device 1, then device 1 -> host
  int rc = omp_target_memcpy(p1, p0, bytes, 0, 0, d1, d0);
  printf("d2d rc: %d\n", rc);
  // CHECK-NEXT: d2d rc: 0

  long s1 = -1;
#pragma omp target device(d1) is_device_ptr(p1) map(from : s1)
  {
    long s = 0;
    for (int i = 0; i < N; ++i)
      s += p1[i];
    s1 = s;
  }
  static int back[N];
  rc = omp_target_memcpy(back, p1, bytes, 0, 0, omp_get_initial_device(), d1);
  long sb = 0;
  int bad = 0;
  for (int i = 0; i < N; ++i) {
    sb += back[i];
    if (back[i] != i % 1000)
      ++bad;
  }
  printf("device 1 sum: %ld host copy sum: %ld bad: %d rc: %d\n", s1, sb, bad, rc);
  // CHECK-NEXT: device 1 sum: 523641600 host copy sum: 523641600 bad: 0 rc: 0

  // Offset copy: 10 ints from p0[100..] to p1[5..].
  rc = omp_target_memcpy(p1, p0, 10 * sizeof(int), 5 * sizeof(int),
                         100 * sizeof(int), d1, d0);
  int w[16];
  omp_target_memcpy(w, p1, sizeof w, 0, 0, omp_get_initial_device(), d1);
  printf("offset copy: %d %d %d %d rc: %d\n", w[4], w[5], w[14], w[15], rc);
  // CHECK-NEXT: offset copy: 4 100 109 15 rc: 0

  // Both devices busy at once.
  long r0 = 0, r1 = 0;
#pragma omp parallel sections num_threads(2)
  {
#pragma omp section
    {
#pragma omp target device(d0) is_device_ptr(p0) map(from : r0)
      {
        long s = 0;
        for (int rep = 0; rep < 20; ++rep)
          for (int i = 0; i < N; ++i)
            s += p0[i] & 1;
        r0 = s;
      }
    }
#pragma omp section
    {
#pragma omp target device(d1) is_device_ptr(p1) map(from : r1)
      {
        long s = 0;
        for (int rep = 0; rep < 20; ++rep)
          for (int i = 0; i < N; ++i)
            s += (p1[i] & 1) == 0;
        r1 = s;
      }
    }
  }
  printf("concurrent: %ld %ld\n", r0, r1);
  // CHECK-NEXT: concurrent: 10485760 10485760

  omp_target_free(p0, d0);
  omp_target_free(p1, d1);
  return 0;
}
