// Emulated DPUs of an ordinary user: `ompdpu run --emulate` started by an
// account without privileges (here nobody) runs regions in its sessions,
// small and large transfers alike. Its client attaches the session's shared
// memory through /proc/<session>/fd and reads it by cross-memory attach,
// which a non-dumpable session refused ("Shared memory error"). LLVM 15-19
// are left out: their runtimes are in root's private cache.
// REQUIRES: root, server-reachable-by-others
// UNSUPPORTED: sanitizer, arm-vm, llvm15, llvm16, llvm17, llvm18, llvm19
// RUN: %clang-offload %s -o %t
// RUN: chmod a+rx %t
// RUN: cd / && setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/nonexistent TMPDIR=/tmp \
// RUN:   OMP_TARGET_OFFLOAD=mandatory %ompdpu run --emulate 1 -- %t 2>&1 | FileCheck %s
// CHECK: uid on the server: 65534
// CHECK-NEXT: on-server: 1
// CHECK-NEXT: 64 MiB both ways: correct
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define N (16 << 20)

int main(void) {
  int pid = 0, uid = -1;
  float *a = malloc(sizeof(float) * N);
  for (int i = 0; i < N; ++i)
    a[i] = (float)i;
#pragma omp target map(tofrom : a[0 : N]) map(from : pid, uid)
  {
    pid = getpid();
    uid = getuid();
    for (int i = 0; i < N; ++i)
      a[i] = -a[i];
  }
  int ok = 1;
  for (int i = 0; i < N; ++i)
    ok &= a[i] == -(float)i;
  printf("uid on the server: %d\n", uid);
  printf("on-server: %d\n", pid != getpid());
  printf("64 MiB both ways: %s\n", ok ? "correct" : "WRONG");
  return !ok;
}
