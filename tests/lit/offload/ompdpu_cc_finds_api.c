// ompdpu-cc finds ompdpu.h and libompdpu by itself outside /usr (here the
// build tree), for both kinds of device images, and the program runs.
// ompdpu-cc wraps clang-14: the other versions' suites have their own clang.
// REQUIRES: aarch64-images
// UNSUPPORTED: arm-vm, sanitizer, llvm15, llvm16, llvm17, llvm18, llvm19
// RUN: %ompdpu-cc --emulate %S/ompdpu_api.c -o %t -lompdpu
// RUN: env OMP_TARGET_OFFLOAD=mandatory %ompdpu run --emulate 1 -- %t \
// RUN:   | FileCheck %S/ompdpu_api.c
// Every link gets the no-DPU notice (no_dpu_notice.c), the aarch64 one too.
// RUN: %ompdpu-cc --emulate --showme:link | FileCheck %s --check-prefix=NOTICE
// NOTICE: {{/lib/ompdpu/no-dpu-notice.o$}}
// RUN: %ompdpu-cc %S/ompdpu_api.c -o %t.arm -lompdpu
// RUN: %llvm-readelf -d %t.arm | FileCheck %s
// CHECK-DAG: NEEDED{{.*}}libompdpu.so
// CHECK-DAG: RUNPATH{{.*}}/lib{{[]:]}}
int main(void) { return 0; }
