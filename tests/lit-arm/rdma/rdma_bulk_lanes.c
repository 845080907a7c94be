// The RDMA testbed's proof (ompdpu-vm start --rdma): plugin and server are two processes
// of the arm64 guest that share only soft-RoCE (UCX_TLS=rc_verbs,ud_verbs,
// UCX_NET_DEVICES=rxe0:1 on both sides). The bulk endpoint's one lane is rc_verbs on rxe0
// and carries rendezvous (rma_bw: RDMA reads and writes of registered memory, no extra
// copy); no lane is TCP or shared memory; 4 MiB survive the round trip; the region ran in
// the server (another process, on aarch64).
// The check goes red on another transport: against a server of its own on TCP (both sides
// UCX_TLS=tcp) the same program runs, and the lane check fails.
// REQUIRES: rdma
// RUN: %clang-offload %s -o %t
// RUN: env OMPDPU_TRACE=1 %run-dpu %t 2>%t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=LANES < %t.err
// RUN: %fault --fresh-server --server-env 'UCX_TLS=tcp UCX_NET_DEVICES=eth0' -- \
// RUN:   env UCX_TLS=tcp UCX_NET_DEVICES=eth0 OMPDPU_TRACE=1 %t > %t.tcp 2>&1
// RUN: FileCheck %s < %t.tcp
// RUN: FileCheck %s --check-prefix=TCP < %t.tcp
// RUN: not FileCheck %s --check-prefix=LANES < %t.tcp
// LANES: bulk endpoint:
// LANES-NOT: {{tcp|posix|sysv|cma|self}}/
// LANES: lane[0]: {{.*}}rc_verbs/rxe0:1{{.*}} rma_bw
// LANES-NOT: {{tcp|posix|sysv|cma|self}}/
// LANES: am_send: {{.*}}<rndv>
// LANES-NOT: {{tcp|posix|sysv|cma|self}}/
// TCP: lane[0]: {{.*}}tcp/eth0
#include <stdio.h>
#include <stdlib.h>
#include <sys/utsname.h>
#include <unistd.h>

#define N (4u << 20)

int main(void) {
  unsigned char *buf = malloc(N);
  for (unsigned i = 0; i < N; ++i)
    buf[i] = (unsigned char)(i * 7);
  int host_pid = getpid(), dev_pid = -1;
  char machine[16] = "";
#pragma omp target map(tofrom : buf [0:N]) map(from : dev_pid, machine)
  {
    struct utsname u;
    dev_pid = getpid();
    if (uname(&u) == 0)
      for (int i = 0; i < 15 && u.machine[i]; ++i)
        machine[i] = u.machine[i];
    for (unsigned i = 0; i < N; ++i)
      buf[i] = (unsigned char)(buf[i] + 1);
  }
  unsigned bad = 0;
  for (unsigned i = 0; i < N; ++i)
    bad += buf[i] != (unsigned char)(i * 7 + 1);
  printf("on-server: %d machine: %s bad: %u\n",
         dev_pid > 0 && dev_pid != host_pid, machine, bad);
  // CHECK: on-server: 1 machine: aarch64 bad: 0
  free(buf);
  return 0;
}
