// OMPDPU_TRACE=<file> writes a Chrome trace of the run: every request of the
// host, every wait of a host thread, and what the session did (each
// request from arrival to answer, each kernel call) with its clock mapped
// onto the host's. The checker reads it as Perfetto would and holds it to
// what this program did: its four kernels ran in the session whose pid the
// kernels report, the slow one for at least 40 ms while the host waited,
// the 4 MiB map went both ways with its size, and every session request
// lies within its host request once the clocks are aligned.
// RUN: %clang-offload %s -o %t
// RUN: rm -f %t.json
// RUN: env OMPDPU_TRACE=%t.json %run-dpu %t > %t.out 2> %t.err
// RUN: FileCheck %s < %t.out
// RUN: FileCheck %s --check-prefix=SUMMARY < %t.err
// RUN: %python %S/Inputs/check_trace.py %t.json --facts %t.out
// CHECK: results right
// SUMMARY: Submit: {{[0-9]+}} requests
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define N (1 << 20) // 4 MiB of ints

int main(void) {
  int *a = malloc(N * sizeof(int));
  for (int i = 0; i < N; ++i)
    a[i] = i;
  long sum = 0;
  int pid1 = -1, pid2 = -1, pid3 = -1, pid4 = -1;
#pragma omp target data map(tofrom : a[0 : N])
  {
#pragma omp target map(from : pid1)
    {
      pid1 = getpid();
      for (int i = 0; i < N; ++i)
        a[i] += 1;
    }
#pragma omp target map(from : pid2)
    {
      pid2 = getpid();
      usleep(50000); // the slow kernel
    }
#pragma omp target map(tofrom : sum) map(from : pid3) nowait depend(out : sum)
    {
      pid3 = getpid();
      for (int i = 0; i < N; ++i)
        sum += a[i];
    }
#pragma omp taskwait
#pragma omp target map(from : pid4)
    {
      pid4 = getpid();
      a[0] = -1;
    }
  }
  long want = (long)N * (N + 1) / 2;
  int same = pid1 == pid2 && pid2 == pid3 && pid3 == pid4;
  printf("session pid %d\nkernels 4\nslow kernel ms 40\nmapped bytes %d\n",
         pid1, (int)(N * sizeof(int)));
  printf("results %s\n", sum == want && a[0] == -1 && a[1] == 2 && same &&
                                 pid1 != getpid()
                             ? "right"
                             : "wrong");
  free(a);
  return 0;
}
