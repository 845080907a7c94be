// A device image whose bytes after the 64-byte ELF header are garbage (so it
// still claims to be x86_64 and a plugin accepts it) cannot be loaded by the
// server: `cannot load image` and a non-zero exit. The untouched binary runs.
// The image's machine (%device-machine) is the target's: x86_64 here, AArch64
// on the arm64 VM.
// RUN: %clang-offload %s -o %t
// RUN: %python %S/Inputs/corrupt_image.py %t %t.bad --objcopy %llvm-objcopy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CORRUPT -DMACHINE=%device-machine
// RUN: %run-dpu %t | FileCheck %s --check-prefix=GOOD
// RUN: not %run-dpu %t.bad 2>&1 | FileCheck %s --check-prefix=BAD --implicit-check-not=ERROR
#include <stdio.h>
#include <unistd.h>

int main(void) {
  int host_pid = getpid(), dev_pid = -1;
  int x = 20;
#pragma omp target map(tofrom : x) map(from : dev_pid)
  {
    dev_pid = getpid();
    x += 22;
  }
  printf("on-server: %d x: %d\n", dev_pid > 0 && dev_pid != host_pid, x);
  return 0;
}
// CORRUPT: corrupt_image: .omp_offloading.device_image{{.*}} e_machine [[MACHINE]]
// GOOD: on-server: 1 x: 42
// BAD: ompdpu error: device 0 ({{[0-9.]+}}:{{[0-9]+}}): cannot load image: {{.+}}
// BAD-NOT: on-server:
