// `ompdpu run --emulate` killed leaves no server and no key behind: with SIGKILL once
// the program runs (the servers stop when their parent dies), and with
// SIGTERM at any moment while the servers or the program start
// (Inputs/kill_run.py).
// UNSUPPORTED: arm-vm
// RUN: %clang-offload %s -o %t
// RUN: %python %S/Inputs/kill_run.py %ompdpu %t | FileCheck %s
// CHECK: after SIGKILL, servers gone: 1
// CHECK: after SIGKILL, run key directories left: 0
// CHECK: after SIGTERM while starting, runs that left a server or the program: 0
// CHECK: after SIGTERM, run key directories left: 0
#include <stdio.h>
#include <unistd.h>

int main(void) {
  printf("running %d\n", (int)getpid());
  fflush(stdout);
  sleep(30);
  return 0;
}
