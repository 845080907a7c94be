// The server (one of this test's own) is killed with SIGKILL ~300 ms into a
// long-running target region: the program must stop with `connection lost`
// and a non-zero exit within %fault-limit s for the whole run (5 s here, 30 s
// on the arm64 VM), and never see the region complete.
// RUN: %clang-offload %s -o %t
// RUN: not %fault --fresh-server --when 'warm-up on-server: 1' --delay 0.3 \
// RUN:   --action kill-server --limit %fault-limit -- %t 2>&1 | FileCheck %s
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}
#pragma omp declare target to(now_s)

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  int host_pid = getpid(), dev_pid = -1;
#pragma omp target map(from : dev_pid)
  dev_pid = getpid();
  printf("warm-up on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  // CHECK: warm-up on-server: 1

  long spins = 0;
  double t0 = now_s();
#pragma omp target map(from : spins)
  {
    // About 20 s of work on the server.
    long s = 0;
    double start = now_s();
    while (now_s() - start < 20.0)
      ++s;
    spins = s;
  }
  printf("long region finished after %.1f s (%ld)\n", now_s() - t0, spins);
  return 0;
}
// CHECK: action: killing server
// What happened and what to look at, not UCX's words alone:
// CHECK: ompdpu error: device 0 ({{[0-9.]+}}:{{[0-9]+}}): connection lost: the server stopped answering ({{.+}}): it died, was stopped or its DPU went away; see the server's log (journalctl -u ompdpu-server for the service) and `ompdpu info`
// CHECK-NOT: long region finished
// CHECK: limit: within {{[0-9]+}} s
// CHECK: exit-status: {{[1-9][0-9]*}}
