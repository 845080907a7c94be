// target enter data / exit data (to, alloc, from, release, delete) and
// omp_target_is_present on the DPU.
// RUN: %clang-offload %s -o %t && %run-dpu %t | FileCheck %s
#include <omp.h>
#include <stdio.h>
#include <unistd.h>

#define N 2048

static double v[N];
static double w[N];

int main(void) {
  int dev = omp_get_default_device();
  for (int i = 0; i < N; ++i)
    v[i] = i * 0.5;
  int host_pid = getpid(), dev_pid = -1;

  printf("present before: %d\n", omp_target_is_present(v, dev));
  // CHECK: present before: 0

#pragma omp target enter data map(to : v[0:N]) map(alloc : w[0:N])
  printf("present after enter: v=%d w=%d\n", omp_target_is_present(v, dev) != 0,
         omp_target_is_present(w, dev) != 0);
  // CHECK-NEXT: present after enter: v=1 w=1

  for (int round = 0; round < 5; ++round) {
#pragma omp target map(from : dev_pid)
    {
      dev_pid = getpid();
      for (int i = 0; i < N; ++i) {
        v[i] += 1.0;
        w[i] = v[i] * 2.0;
      }
    }
  }
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  // CHECK-NEXT: on-server: 1
  printf("host v[4] before exit: %.1f\n", v[4]);
  // CHECK-NEXT: host v[4] before exit: 2.0

#pragma omp target exit data map(from : v[0:N]) map(delete : w[0:N])
  double sum = 0;
  for (int i = 0; i < N; ++i)
    sum += v[i];
  printf("present after exit: v=%d w=%d\n", omp_target_is_present(v, dev) != 0,
         omp_target_is_present(w, dev) != 0);
  // CHECK-NEXT: present after exit: v=0 w=0
  // v[i] = i/2 + 5
  printf("v[4]: %.1f sum: %.1f\n", v[4], sum);
  // CHECK-NEXT: v[4]: 7.0 sum: 1058304.0

  // Reference counting: two enters need two exits.
#pragma omp target enter data map(to : v[0:N])
#pragma omp target enter data map(to : v[0:N])
#pragma omp target exit data map(release : v[0:N])
  printf("present after 2 enters, 1 release: %d\n", omp_target_is_present(v, dev) != 0);
  // CHECK-NEXT: present after 2 enters, 1 release: 1
#pragma omp target exit data map(release : v[0:N])
  printf("present after second release: %d\n", omp_target_is_present(v, dev) != 0);
  // CHECK-NEXT: present after second release: 0
  return 0;
}
