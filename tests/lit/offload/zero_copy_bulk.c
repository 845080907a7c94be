// Mapped data moves zero copy between processes on one machine: the bulk
// endpoint to the session has a cma lane for rendezvous (rma_bw), not only
// shared-memory FIFOs that copy twice; and 4 MiB survive the round trip.
// (Over TCP to the arm64 VM there is no cma: not run there.)
// UNSUPPORTED: arm-vm
// RUN: %clang-offload %s -o %t
// RUN: env OMPDPU_TRACE=1 %run-dpu %t 2>%t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=LANES < %t.err
// LANES: bulk endpoint:
// LANES: cma/memory{{.*}} rma_bw
// LANES: am_send: {{.*}}<rndv>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define N (4u << 20)

int main(void) {
  unsigned char *buf = malloc(N);
  for (unsigned i = 0; i < N; ++i)
    buf[i] = (unsigned char)(i * 7);
  int host_pid = getpid(), dev_pid = -1;
#pragma omp target map(tofrom : buf[0:N]) map(from : dev_pid)
  {
    dev_pid = getpid();
    for (unsigned i = 0; i < N; ++i)
      buf[i] = (unsigned char)(buf[i] + 1);
  }
  unsigned bad = 0;
  for (unsigned i = 0; i < N; ++i)
    bad += buf[i] != (unsigned char)(i * 7 + 1);
  printf("on-server: %d bad: %u\n", dev_pid > 0 && dev_pid != host_pid, bad);
  // CHECK: on-server: 1 bad: 0
  free(buf);
  return 0;
}
