// The whole server (supervisor and every session process under it; a server
// of this test's own) is killed with SIGKILL while the program issues many
// short target regions, as a DPU that crashes or reboots would: `connection
// lost`, non-zero exit, the whole run within %fault-limit s.
// RUN: %clang-offload %s -o %t
// RUN: not %fault --fresh-server --when 'warm-up on-server: 1' --delay 0.5 \
// RUN:   --action kill-server-tree --limit %fault-limit -- %t 2>&1 | FileCheck %s
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define N 4096

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}
#pragma omp declare target to(now_s)

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  static int a[N];
  int host_pid = getpid(), dev_pid = -1;
#pragma omp target map(from : dev_pid)
  dev_pid = getpid();
  printf("warm-up on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  // CHECK: warm-up on-server: 1

  double t0 = now_s();
  long regions = 0;
  while (now_s() - t0 < 20.0) {
#pragma omp target map(tofrom : a[0:N])
    {
      double start = now_s();
      for (int i = 0; i < N; ++i)
        a[i] += 1;
      while (now_s() - start < 0.001)
        ;
    }
    ++regions;
  }
  printf("all regions finished (%ld)\n", regions);
  return 0;
}
// CHECK: action: killing server and its session processes
// CHECK: ompdpu error: device 0 ({{[0-9.]+}}:{{[0-9]+}}): connection lost: {{.+}}
// CHECK-NOT: all regions finished
// CHECK: limit: within {{[0-9]+}} s
// CHECK: exit-status: {{[1-9][0-9]*}}
