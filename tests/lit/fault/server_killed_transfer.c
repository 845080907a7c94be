// The server (one of this test's own) is killed with SIGKILL while large transfers are
// in flight (16 MiB each way per round: rendezvous, over RDMA the server's reads and
// writes of the program's registered memory): `connection lost`, a non-zero exit, the
// whole run within %fault-limit s, and no round after the kill completes.
// RUN: %clang-offload %s -o %t
// RUN: not %fault --fresh-server --when 'round 2 ok' --delay 0.2 \
// RUN:   --action kill-server --limit %fault-limit -- %t 2>&1 | FileCheck %s
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N (16u << 20)

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  unsigned char *a = malloc(N), *b = malloc(N);
  memset(a, 1, N);
  int host_pid = getpid(), dev_pid = -1;
#pragma omp target enter data map(alloc : a [0:N], b [0:N])
  for (int round = 1; round <= 1000; ++round) {
    a[round] = (unsigned char)round;
#pragma omp target update to(a [0:N])
#pragma omp target map(from : dev_pid)
    {
      dev_pid = getpid();
      b[0] = a[round];
    }
#pragma omp target update from(b [0:N])
    printf("round %d %s\n", round,
           dev_pid != host_pid && b[0] == (unsigned char)round ? "ok" : "BAD");
  }
  printf("all rounds finished\n");
  return 0;
}
// CHECK: round 2 ok
// CHECK: action: killing server
// CHECK: ompdpu error: device 0 ({{[0-9.]+}}:{{[0-9]+}}): connection lost: {{.+}}
// CHECK-NOT: all rounds finished
// CHECK: limit: within {{[0-9]+}} s
// CHECK: exit-status: {{[1-9][0-9]*}}
