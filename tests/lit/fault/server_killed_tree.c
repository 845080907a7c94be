// The whole server (the listed pid and every process under it) is killed
// with SIGKILL while the program is issuing many short target regions, as a
// DPU that crashes or reboots would: `connection lost`, non-zero exit, the
// whole run within 5 s.
// RUN: %clang-offload %s -o %t -pthread
// RUN: not %python %S/Inputs/limit.py 5 %run-dpu %t 2>&1 | FileCheck %s
#include "Inputs/kill_server.h"

#define N 4096

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (server_pid_from_env() <= 0) {
    printf("OMPDPU_SERVER_PIDS not set\n");
    return 2;
  }
  static int a[N];
  int host_pid = getpid(), dev_pid = -1;
#pragma omp target map(from : dev_pid)
  dev_pid = getpid();
  printf("warm-up on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  // CHECK: warm-up on-server: 1

  struct kill_plan plan = {300, 1};
  pthread_t th;
  pthread_create(&th, NULL, killer, &plan);

  double t0 = now_s();
  long regions = 0;
  while (now_s() - t0 < 10.0) {
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
  pthread_join(th, NULL);
  return 0;
}
// CHECK: killing server and its session processes
// CHECK: ompdpu error: device 0 (127.0.0.1:{{[0-9]+}}): connection lost: {{.+}}
// CHECK-NOT: all regions finished
// CHECK: limit: within 5 s
// CHECK: exit-status: {{[1-9][0-9]*}}
