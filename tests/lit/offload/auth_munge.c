// MUNGE, the cluster's credential service, authenticates clients in both
// directions: with a server started --munge the client's credential tells the
// server its uid, and a client authenticated as root runs as --root-user. A
// server without --munge refuses a MUNGE client clearly.
// REQUIRES: root, munge, server-reachable-by-others
// RUN: %clang-offload %s -o %t
// RUN: %python %S/Inputs/with_munged.py -- %python %S/Inputs/with_server.py \
// RUN:   --server-arg --munge --server-arg --root-user --server-arg nobody %server -- \
// RUN:   env OMPDPU_AUTH=munge OMP_TARGET_OFFLOAD=mandatory %ompdpu run --devices {addr} -- %t \
// RUN:   2>&1 | FileCheck %s
// CHECK: session uid 65534
// CHECK: on-server: 1
// RUN: %python %S/Inputs/with_munged.py -- %python %S/Inputs/with_server.py %server -- \
// RUN:   env OMPDPU_AUTH=munge OMP_TARGET_OFFLOAD=mandatory %ompdpu run --devices {addr} -- %t \
// RUN:   > %t.nomunge 2>&1 || true
// RUN: FileCheck %s --check-prefix=NOMUNGE < %t.nomunge
// NOMUNGE-DAG: refused client '{{.*}}': this server does not accept MUNGE (no --munge)
// NOMUNGE-DAG: ompdpu error: device 0 (127.0.0.1:{{[0-9]+}}): this server does not accept MUNGE
// No munged: a clear error, no hang.
// RUN: env OMPDPU_MUNGE_SOCKET=%t.nosocket %python %S/Inputs/with_server.py \
// RUN:   --server-arg --munge %server -- env OMPDPU_AUTH=munge \
// RUN:   OMPDPU_MUNGE_SOCKET=%t.nosocket OMP_TARGET_OFFLOAD=mandatory \
// RUN:   %ompdpu run --devices {addr} -- %t > %t.nod 2>&1 || true
// RUN: FileCheck %s --check-prefix=NOD < %t.nod
// NOD: ompdpu error: device 0 (127.0.0.1:{{[0-9]+}}): the server cannot prove itself: MUNGE cannot make a credential (munged at {{.*}}.nosocket)
#include <stdio.h>
#include <unistd.h>

int main(void) {
  int host_pid = getpid(), dev_pid = -1, uid = -1;
#pragma omp target map(from : dev_pid, uid)
  {
    dev_pid = getpid();
    uid = getuid();
  }
  printf("session uid %d\n", uid);
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  return 0;
}
