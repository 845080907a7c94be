// Device memory routines: omp_target_alloc/free, omp_target_memcpy in both
// directions and with offsets, omp_target_memcpy_rect, omp_target_is_present,
// omp_target_associate_ptr/disassociate_ptr, is_device_ptr.
// RUN: %clang-offload %s -o %t && %run-dpu %t | FileCheck %s
#include <omp.h>
#include <stdio.h>
#include <unistd.h>

#define N 100000

int main(void) {
  int dev = omp_get_default_device();
  int host = omp_get_initial_device();
  int host_pid = getpid(), dev_pid = -1;
  static double h[N], back[N];
  for (int i = 0; i < N; ++i)
    h[i] = i;

  double *d = (double *)omp_target_alloc(N * sizeof(double), dev);
  printf("alloc: %d\n", d != NULL);
  // CHECK: alloc: 1
  printf("raw device pointer present: %d host array present: %d\n",
         omp_target_is_present(d, dev) != 0, omp_target_is_present(h, dev) != 0);
  // CHECK-NEXT: raw device pointer present: 0 host array present: 0

  int rc1 = omp_target_memcpy(d, h, N * sizeof(double), 0, 0, dev, host);
  double sum = 0;
#pragma omp target is_device_ptr(d) map(from : sum, dev_pid)
  {
    dev_pid = getpid();
    double s = 0;
    for (int i = 0; i < N; ++i) {
      s += d[i];
      d[i] = -d[i];
    }
    sum = s;
  }
  int rc2 = omp_target_memcpy(back, d, N * sizeof(double), 0, 0, host, dev);
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  // CHECK-NEXT: on-server: 1
  printf("sum: %.0f back[7]: %.0f back[N-1]: %.0f rc: %d %d\n", sum, back[7],
         back[N - 1], rc1, rc2);
  // CHECK-NEXT: sum: 4999950000 back[7]: -7 back[N-1]: -99999 rc: 0 0

  // Offsets on both sides: 3 doubles from d[10..12] to back[0..2].
  int rc3 = omp_target_memcpy(back, d, 3 * sizeof(double), 0, 10 * sizeof(double),
                              host, dev);
  printf("offset: %.0f %.0f %.0f %.0f rc: %d\n", back[0], back[1], back[2], back[3], rc3);
  // CHECK-NEXT: offset: -10 -11 -12 -3 rc: 0

  // Rectangular copy: the 3x4 block at (2,5) of a 10x20 host matrix into
  // the top-left corner of a 4x8 device matrix.
  static int m[10][20];
  for (int r = 0; r < 10; ++r)
    for (int c = 0; c < 20; ++c)
      m[r][c] = r * 100 + c;
  int *dm = (int *)omp_target_alloc(4 * 8 * sizeof(int), dev);
#pragma omp target is_device_ptr(dm)
  for (int i = 0; i < 32; ++i)
    dm[i] = 0;
  size_t vol[2] = {3, 4}, dst_off[2] = {0, 0}, src_off[2] = {2, 5};
  size_t dst_dims[2] = {4, 8}, src_dims[2] = {10, 20};
  int rc4 = omp_target_memcpy_rect(dm, m, sizeof(int), 2, vol, dst_off, src_off,
                                   dst_dims, src_dims, dev, host);
  int corner[4] = {0};
#pragma omp target is_device_ptr(dm) map(from : corner)
  {
    corner[0] = dm[0];         // (0,0) <- m[2][5]
    corner[1] = dm[3];         // (0,3) <- m[2][8]
    corner[2] = dm[2 * 8 + 3]; // (2,3) <- m[4][8]
    corner[3] = dm[3 * 8];     // (3,0): outside the block, still 0
  }
  printf("rect: %d %d %d %d rc: %d\n", corner[0], corner[1], corner[2], corner[3], rc4);
  // CHECK-NEXT: rect: 205 208 408 0 rc: 0

  // Associate the device buffer with a host array: regions mapping the host
  // array then use that device memory, without copying.
  static double assoc[1000];
  for (int i = 0; i < 1000; ++i)
    assoc[i] = 1.0;
  int rc5 = omp_target_associate_ptr(assoc, d, sizeof assoc, 0, dev);
  printf("associated present: %d rc: %d\n", omp_target_is_present(assoc, dev) != 0, rc5);
  // CHECK-NEXT: associated present: 1 rc: 0
  double first = 0;
#pragma omp target map(tofrom : assoc[0:1000]) map(from : first)
  {
    first = assoc[5]; // device memory holds -5 from the earlier region
    assoc[5] = 42.0;
  }
  printf("device saw: %.0f host assoc[5]: %.0f\n", first, assoc[5]);
  // CHECK-NEXT: device saw: -5 host assoc[5]: 1
  int rc6 = omp_target_disassociate_ptr(assoc, dev);
  omp_target_memcpy(back, d, 6 * sizeof(double), 0, 0, host, dev);
  printf("disassociated present: %d rc: %d d[5]: %.0f\n",
         omp_target_is_present(assoc, dev) != 0, rc6, back[5]);
  // CHECK-NEXT: disassociated present: 0 rc: 0 d[5]: 42

  omp_target_free(dm, dev);
  omp_target_free(d, dev);
  printf("freed\n");
  // CHECK-NEXT: freed
  return 0;
}
