// %libomptarget-run-fail-generic under ompdpu: a program that offloads and
// then crashes must count as the crash `not --crash` expects.
// RUN: %libomptarget-compile-generic && %libomptarget-run-fail-generic 2>&1 | %fcheck-generic
// REQUIRES: ompdpu
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(void) {
  int host_pid = getpid(), dev_pid = 0;
#pragma omp target map(from : dev_pid)
  dev_pid = getpid();
  // CHECK: other process: 1
  fprintf(stderr, "other process: %d\n", dev_pid != host_pid);
  abort();
}
