// A child made by fork() inherits the program's connection to the DPU: it
// must neither disturb the parent's session (a child that just exits, a
// child that tries to offload) nor take the parent's replies. The child's
// offload fails with an error that says why; the parent's regions go on
// running on the server with the right results.
// RUN: %clang-offload %s -o %t
// RUN: %run-dpu %t > %t.out 2> %t.err
// RUN: FileCheck %s < %t.out
// RUN: FileCheck %s --check-prefix=ERR < %t.err
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static int host_pid, dev_pid;

static void add_on_device(int *x, int n) {
#pragma omp target map(tofrom : x [0:1]) map(from : dev_pid)
  {
    dev_pid = getpid();
    *x += n;
  }
}

/// Fork; the child offloads or not, then leaves with exit() (which runs the
/// plugin's and libomptarget's destructors); its exit status.
static int child(int x, int offload) {
  fflush(stdout);
  pid_t p = fork();
  if (p == 0) {
    if (offload) {
      add_on_device(&x, 10);
      printf("child x=%d\n", x); // not reached: the region fails
    }
    exit(0);
  }
  int st = 0;
  waitpid(p, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(void) {
  host_pid = getpid();
  int x = 1;
  // Before any region (the plugin connected at start-up).
  printf("quiet child: %d\n", child(x, 0));
  // CHECK: quiet child: 0
  add_on_device(&x, 1);
  printf("parent x=%d on-server=%d\n", x, dev_pid > 0 && dev_pid != host_pid);
  // CHECK-NEXT: parent x=2 on-server=1
  printf("quiet child: %d\n", child(x, 0));
  // CHECK-NEXT: quiet child: 0
  int st = child(x, 1);
  printf("offloading child failed: %d\n", st != 0);
  // CHECK-NEXT: offloading child failed: 1
  // ERR: device 0 ({{.*}}): {{.*}}this process ({{[0-9]+}}) is a fork() of the
  // one that connected ({{[0-9]+}}): the connection and its session are the
  // parent's
  dev_pid = -1;
  add_on_device(&x, 100);
  printf("parent x=%d on-server=%d\n", x, dev_pid > 0 && dev_pid != host_pid);
  // CHECK-NEXT: parent x=102 on-server=1
  // CHECK-NOT: child x=
  return 0;
}
