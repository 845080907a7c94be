// A user's UCX_TLS without shared memory (here TCP, as over a network to a
// real DPU): regions, small maps and a bulk array work, they travel over TCP,
// and UCX prints nothing about ompdpu's shared-memory settings (it used to
// warn "unused env variables: UCX_POSIX_ERROR_HANDLING,..." on the program's
// stdout).
// RUN: %clang-offload %s -o %t
// RUN: env UCX_TLS=tcp,self OMPDPU_TRACE=1 %run-dpu %t >%t.out 2>%t.err
// RUN: FileCheck %s --implicit-check-not=UCX < %t.out
// RUN: FileCheck %s --check-prefix=TRACE --implicit-check-not=WARN < %t.err
// TRACE: bulk endpoint:
// TRACE: tcp/
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define BIG (1u << 20)

int main(void) {
  int host_pid = getpid(), dev_pid = -1;
  double small[8][8];
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j)
      small[i][j] = i + 0.125 * j;
  double sum = 0;
  for (int r = 0; r < 20; ++r) {
#pragma omp target map(to : small[0:8][0:8]) map(from : sum, dev_pid)
    {
      dev_pid = getpid();
      double s = 0;
      for (int i = 0; i < 8; ++i)
        for (int j = 0; j < 8; ++j)
          s += small[i][j];
      sum = s;
    }
  }
  unsigned *big = malloc(BIG * sizeof(unsigned));
  for (unsigned i = 0; i < BIG; ++i)
    big[i] = i;
#pragma omp target map(tofrom : big[0:BIG])
  for (unsigned i = 0; i < BIG; ++i)
    big[i] = 3 * big[i] + 1;
  unsigned wrong = 0;
  for (unsigned i = 0; i < BIG; ++i)
    wrong += big[i] != 3 * i + 1;

  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  // CHECK: on-server: 1
  printf("sum: %.3f\n", sum);
  // CHECK-NEXT: sum: 252.000
  printf("big wrong: %u\n", wrong);
  // CHECK-NEXT: big wrong: 0
  free(big);
  return 0;
}
