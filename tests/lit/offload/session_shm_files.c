// A session whose client is on another machine names its UCX shared memory
// segments as files in /dev/shm (no /proc links), and a session killed
// when its client leaves never removes them: about 4 MiB of a DPU's memory
// per session. The supervisor removes those the session reported when it
// started. Another machine is faked with a boot id of its own (a mount
// namespace), as the server tells machines apart by it. Server-side only:
// LLVM 14's client suffices (17 and 18 run in a root where unshare cannot).
// REQUIRES: root
// UNSUPPORTED: arm-vm, llvm15, llvm16, llvm17, llvm18, llvm19
// RUN: %clang-offload %s -o %t
// RUN: echo 00000000-0000-4000-8000-0000000000aa > %t.boot
// RUN: %python %S/Inputs/with_server.py --server-arg --verbose %server -- \
// RUN:   unshare -m sh -c 'mount --bind %t.boot /proc/sys/kernel/random/boot_id && \
// RUN:   env OMP_TARGET_OFFLOAD=mandatory %ompdpu run --devices {addr} -- %t' > %t.log 2>&1
// RUN: FileCheck %s < %t.log
// CHECK-DAG: on-server: 1
// CHECK-DAG: session {{[0-9]+}} left {{[1-9][0-9]*}} shared memory file{{s?}}: removed
#include <stdio.h>
#include <unistd.h>

int main(void) {
  int pid = 0;
#pragma omp target map(from : pid)
  pid = getpid();
  printf("on-server: %d\n", pid != getpid());
  return 0;
}
