// The conformance run's own check that its ompdpu pass really offloads: the
// same substitutions as the suite's tests (%libomptarget-compile-run-and-check-
// generic), and the region must run in another process (an emulated DPU's
// server), not in the program as with LLVM's host plugin.
// RUN: %libomptarget-compile-run-and-check-generic
// REQUIRES: ompdpu
#include <omp.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
  int host_pid = getpid(), dev_pid = 0, initial = 1;
#pragma omp target map(from : dev_pid, initial)
  {
    dev_pid = getpid();
    initial = omp_is_initial_device();
  }
  // Two emulated DPUs (from LLVM 19 on, the host plugin's devices follow them).
  // CHECK: two devices or more: 1, initial device: 0, other process: 1
  printf("two devices or more: %d, initial device: %d, other process: %d\n",
         omp_get_num_devices() >= 2, initial, dev_pid != host_pid);
  return 0;
}
