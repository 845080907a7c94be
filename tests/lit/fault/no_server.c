// No server listening at the configured address (or none that UCX_TLS lets
// the program reach). Offload not mandatory: a
// note, and the program runs on the host with correct results. Mandatory:
// an error and a non-zero exit, no result.
// RUN: %clang-offload %s -o %t
// RUN: %ompdpu run --devices 127.0.0.1:1 -- %t 2>&1 | FileCheck %s --check-prefix=NOTE
// RUN: env OMPDPU_DEVICES=127.0.0.1:1 %ompdpu run -- %t 2>&1 | FileCheck %s --check-prefix=NOTE
// RUN: not env OMP_TARGET_OFFLOAD=mandatory %ompdpu run --devices 127.0.0.1:1 -- %t 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MAND
// A server runs, but the user's UCX_TLS leaves no transport to it: the error
// says so.
// RUN: not env UCX_TLS=self OMP_TARGET_OFFLOAD=mandatory %ompdpu run --emulate 1 -- %t 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TLS
// UCX's own log (here "transport 'rc' is not available" where there is no
// RDMA) goes to stderr under `ompdpu run`, not into the program's output.
// RUN: env UCX_TLS=rc,self %ompdpu run --emulate 1 -- %t 2>/dev/null \
// RUN:   | FileCheck %s --check-prefix=STDOUT --implicit-check-not=UCX
#include <stdio.h>
#include <unistd.h>

#define N 1000

int main(void) {
  int a[N];
  for (int i = 0; i < N; ++i)
    a[i] = i;
  int host_pid = getpid(), dev_pid = -1;
  long sum = 0;
#pragma omp target map(to : a) map(from : sum, dev_pid)
  {
    dev_pid = getpid();
    long s = 0;
    for (int i = 0; i < N; ++i)
      s += a[i];
    sum = s;
  }
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  printf("sum: %ld\n", sum);
  return 0;
}
// NOTE: ompdpu note: device 0 (127.0.0.1:1): cannot connect: {{.+}}
// NOTE: on-server: 0
// NOTE-NEXT: sum: 499500

// MAND: ompdpu error: device 0 (127.0.0.1:1): cannot connect: {{.+}}
// MAND-NOT: sum:

// TLS: ompdpu error: device 0 ({{.+}}): cannot connect: {{.+}} (UCX_TLS=self is set: it may leave no UCX transport that reaches this server)
// TLS-NOT: sum:

// STDOUT: on-server: 0
// STDOUT-NEXT: sum: 499500
