// ompdpu-cc finds ompdpu.h and libompdpu by itself outside /usr (here the
// build tree), for both kinds of device images, and the program runs.
// REQUIRES: aarch64-images
// RUN: %ompdpu-cc --emulate %S/ompdpu_api.c -o %t -lompdpu
// RUN: env OMP_TARGET_OFFLOAD=mandatory %ompdpu run --emulate 1 -- %t \
// RUN:   | FileCheck %S/ompdpu_api.c
// RUN: %ompdpu-cc %S/ompdpu_api.c -o %t.arm -lompdpu
// RUN: %llvm-readelf -d %t.arm | FileCheck %s
// CHECK-DAG: NEEDED{{.*}}libompdpu.so
// CHECK-DAG: RUNPATH{{.*}}/lib{{[]:]}}
int main(void) { return 0; }
