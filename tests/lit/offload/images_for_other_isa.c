// A program whose device images are for aarch64 (a BlueField's) run against
// emulated DPUs (x86_64) is told why its regions do not reach them, naming
// the DPUs' ISA and how to compile for them: a note and the host without
// mandatory offloading, an error with it (libomptarget then stops it).
// REQUIRES: aarch64-images
// UNSUPPORTED: arm-vm, sanitizer, llvm15, llvm16, llvm17, llvm18, llvm19
// RUN: %ompdpu-cc %s -o %t
// RUN: %ompdpu run --emulate 1 -- %t 2>&1 | FileCheck %s --check-prefix=NOTE
// NOTE: ompdpu note: this program's device images are for aarch64, which no DPU runs (device 0 ({{.*}}) runs x86_64): target regions run on the host; compile for the DPUs' ISA (emulated DPUs: x86_64, ompdpu-cc --emulate; a BlueField: aarch64, ompdpu-cc)
// NOTE: region ran on the host: 1
// RUN: env OMP_TARGET_OFFLOAD=mandatory not %ompdpu run --emulate 1 -- %t 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MANDATORY
// MANDATORY: ompdpu error: this program's device images are for aarch64, which no DPU runs (device 0 ({{.*}}) runs x86_64): target regions cannot run;
// MANDATORY-NOT: region ran
#include <stdio.h>
#include <unistd.h>

int main(void) {
  int pid = 0;
#pragma omp target map(from : pid)
  pid = getpid();
  printf("region ran on the host: %d\n", pid == getpid());
  return 0;
}
