// A libomptarget that loads the plugin of another ABI gets a message that
// names the directory to use, not a silent run on the host: 16 without its
// .nextgen step, and 17, load the 14/15 library of lib/ompdpu.
// REQUIRES: llvm16 || llvm17
// RUN: %clang-offload %s -o %t
// RUN: env OMPDPU_PLUGIN_DIR=%ompdpu-lib/ompdpu \
// RUN:   LIBOMPTARGET_NEXTGEN_PLUGINS=0 not %run-dpu %t 2>&1 \
// RUN:   | FileCheck %s --check-prefix=LLVM%llvm-major
#include <stdio.h>

int main(void) {
  int x = 0;
#pragma omp target map(tofrom : x)
  x = 1;
  printf("x: %d\n", x);
  return 0;
}
// LLVM16: ompdpu error: libomptarget 16 loaded {{.*}}/lib/ompdpu/emulated/
// LLVM16-SAME: libomptarget.rtl.x86_64.so, which has the plugin ABI of
// LLVM16-SAME: libomptarget 14 and 15: its plugin is in lib/ompdpu (the
// LLVM16-SAME: default of `ompdpu run`)
// LLVM16-NOT: x: 1
// LLVM17: ompdpu error: libomptarget 17 loaded {{.*}}/lib/ompdpu/emulated/
// LLVM17-SAME: libomptarget.rtl.x86_64.so, which has the plugin ABI of
// LLVM17-SAME: libomptarget 14 and 15: its plugin is in lib/ompdpu/llvm17
// LLVM17-NOT: x: 1
