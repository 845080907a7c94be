// A kernel that stops its own session process (SIGSTOP; a seccomp filter
// lets a kernel signal only its own process) would leave its client
// waiting forever, as the supervisor still answers for it: the supervisor
// ends the stopped session and the program gets `session process stopped by
// SIGSTOP` and a non-zero exit, well within the limit. The same server then
// serves a second, healthy program, and is still running at the end.
// RUN: %clang-offload %s -DSTOP -o %t.stop
// RUN: %clang-offload %s -o %t.ok
// RUN: %fault --fresh-server --check-server --limit 60 -- \
// RUN:   sh -c '%t.stop; echo stop-exit=$?; %t.ok' 2>&1 | FileCheck %s
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  int host_pid = getpid(), dev_pid = -1;
#pragma omp target map(from : dev_pid)
  dev_pid = getpid();
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  // CHECK: on-server: 1
#ifdef STOP
  // CHECK: ompdpu error: device 0 ({{[0-9.]+}}:{{[0-9]+}}): session process stopped by SIGSTOP (Stopped (signal)), and ended: a stopped session cannot serve its client
#pragma omp target
  raise(SIGSTOP);
  printf("stop program went on\n");
  return 0;
  // CHECK-NOT: went on
  // CHECK: stop-exit={{[1-9][0-9]*}}
#else
  // CHECK-NEXT: on-server: 1
  return 0;
  // CHECK: server alive: 1
  // CHECK-NEXT: exit-status: 0
#endif
}
