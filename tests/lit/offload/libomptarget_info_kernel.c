// LIBOMPTARGET_INFO's plugin-kernel bit (16) makes the plugin name each kernel
// it launches, as LLVM's own plugins do from libomptarget 16 on (LLVM's suite
// checks that line: api/omp_env_vars.c, offloading/info.c); without the bit,
// nothing.
// REQUIRES: llvm16 || llvm17 || llvm18
// RUN: %clang-offload %S/Inputs/on_server.c -o %t
// RUN: env LIBOMPTARGET_INFO=16 %run-dpu %t 2>&1 | FileCheck %s --check-prefix=INFO
// RUN: env LIBOMPTARGET_INFO=32 %run-dpu %t 2>&1 | FileCheck %s --check-prefix=QUIET
// INFO: device 0 info: Launching kernel __omp_offloading_{{.*}}main{{.*}} with 1 blocks and 1 threads in Generic mode
// INFO: on-server: 1
// QUIET-NOT: Launching kernel
// QUIET: on-server: 1
int main(void) { return 0; }
