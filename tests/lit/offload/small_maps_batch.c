// A region's small maps, its launch and its small results travel as one
// request (a Batch) and one reply. The first region's launch leaves at
// once (nothing is known yet about what follows it) and its result in a
// Batch of its own; from then on the plugin knows that results follow this
// kernel, and each region is exactly one Batch: 20 regions, 21 Batches, and
// no Submit, Retrieve or Run of their own.
// RUN: %clang-offload %s -o %t
// RUN: env OMPDPU_TRACE=1 %run-dpu %t 2>%t.err | FileCheck %s
// The statistics have a prefix of their own, not `ompdpu info`'s.
// RUN: FileCheck %s --check-prefix=TRACE --implicit-check-not='ompdpu info' < %t.err
// TRACE-NOT: {{ (Submit|Retrieve|Run): }}
// TRACE: ompdpu trace: {{[0-9.]+}}:{{[0-9]+}}: Batch: 21 requests
// TRACE-NOT: {{ (Submit|Retrieve|Run): }}
#include <stdio.h>
#include <unistd.h>

int main(void) {
  long a[8], b[8], c[4], sum_all = 0;
  int host_pid = getpid(), dev_pid = -1, wrong = 0;
  for (int r = 0; r < 20; ++r) {
    for (int i = 0; i < 8; ++i) {
      a[i] = r + i;
      b[i] = 100 * r;
    }
    for (int i = 0; i < 4; ++i)
      c[i] = -r;
    long sum = 0;
#pragma omp target map(to : a, b, c) map(from : sum, dev_pid)
    {
      dev_pid = getpid();
      long s = 0;
      for (int i = 0; i < 8; ++i)
        s += a[i] + b[i];
      for (int i = 0; i < 4; ++i)
        s += c[i];
      sum = s;
    }
    // 8r + 28 + 800r - 4r
    wrong += sum != 804L * r + 28;
    sum_all += sum;
  }
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  // CHECK: on-server: 1
  printf("sum: %ld wrong: %d\n", sum_all, wrong);
  // CHECK-NEXT: sum: 153320 wrong: 0
  return 0;
}
