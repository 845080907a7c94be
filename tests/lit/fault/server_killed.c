// The server process (the pid in OMPDPU_SERVER_PIDS) is killed with SIGKILL
// ~300 ms into a long-running target region: the program must stop with
// `connection lost` and a non-zero exit, within 5 s for the whole run, and
// never see the region complete.
// RUN: %clang-offload %s -o %t -pthread
// RUN: not %python %S/Inputs/limit.py 5 %run-dpu %t 2>&1 | FileCheck %s
#include "Inputs/kill_server.h"

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (server_pid_from_env() <= 0) {
    printf("OMPDPU_SERVER_PIDS not set\n");
    return 2;
  }
  int host_pid = getpid(), dev_pid = -1;
#pragma omp target map(from : dev_pid)
  dev_pid = getpid();
  printf("warm-up on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  // CHECK: warm-up on-server: 1

  struct kill_plan plan = {300, 0};
  pthread_t th;
  pthread_create(&th, NULL, killer, &plan);

  long spins = 0;
  double t0 = now_s();
#pragma omp target map(from : spins)
  {
    // About 10 s of work on the server.
    long s = 0;
    double start = now_s();
    while (now_s() - start < 10.0)
      ++s;
    spins = s;
  }
  printf("long region finished after %.1f s (%ld)\n", now_s() - t0, spins);
  pthread_join(th, NULL);
  return 0;
}
// CHECK: killing server
// CHECK: ompdpu error: device 0 (127.0.0.1:{{[0-9]+}}): connection lost: {{.+}}
// CHECK-NOT: long region finished
// CHECK: limit: within 5 s
// CHECK: exit-status: {{[1-9][0-9]*}}
