// A malformed OMPDPU_DEVICES is reported once (both copies of the plugin,
// x86_64 and aarch64, read it), and the program runs on the host.
// RUN: %clang-offload %s -o %t
// RUN: env OMPDPU_DEVICES=garbage %ompdpu run -- %t 2>&1 | FileCheck %s
// RUN: env OMPDPU_DEVICES=127.0.0.1:99999 %ompdpu run -- %t 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PORT
#include <stdio.h>
#include <unistd.h>

int main(void) {
  int host_pid = getpid(), dev_pid = -1;
#pragma omp target map(from : dev_pid)
  dev_pid = getpid();
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  return 0;
}
// CHECK: ompdpu error: configuration: OMPDPU_DEVICES: expected host:port, got 'garbage'
// CHECK-NOT: configuration:
// CHECK: on-server: 0
// PORT: ompdpu error: configuration: OMPDPU_DEVICES: {{.*}}99999
// PORT-NOT: configuration:
// PORT: on-server: 0
