// A server started by hand (ompdpu-server --listen ADDR --cores 0) and
// reached through `ompdpu run --devices ADDR`; `ompdpu info` lists the
// configured devices with their state (exit 1 when one is unreachable). With one core the server runs parallel regions on one
// core/thread, and results are unchanged.
// RUN: %clang-offload %s -o %t
// RUN: %python %S/Inputs/with_server.py --cores 0 %server -- \
// RUN:   env OMP_TARGET_OFFLOAD=mandatory %ompdpu run --devices {addr} -- %t | FileCheck %s
// RUN: %python %S/Inputs/with_server.py %server -- \
// RUN:   env OMPDPU_DEVICES={addr} %ompdpu info | FileCheck %s --check-prefix=INFO
// RUN: not %python %S/Inputs/with_server.py %server -- \
// RUN:   env OMPDPU_DEVICES={addr},127.0.0.1:1 %ompdpu info | FileCheck %s --check-prefix=INFO2
// RUN: %python %S/Inputs/with_server.py %server -- \
// RUN:   env -u OMPDPU_DEVICES %ompdpu info --devices {addr} | FileCheck %s --check-prefix=INFO3
#include <omp.h>
#include <ompdpu.h>
#include <stdio.h>
#include <unistd.h>

#define N 100000

int main(void) {
  printf("dpus: %d\n", ompdpu_num_devices());
  // CHECK: dpus: 1
  int dpu = ompdpu_device(0);
  int host_pid = getpid(), dev_pid = -1, procs = 0, team = 0;
  long sum = 0;
#pragma omp target device(dpu) map(from : dev_pid, procs, team, sum)
  {
    dev_pid = getpid();
    procs = omp_get_num_procs();
    long s = 0;
#pragma omp parallel reduction(+ : s)
    {
#pragma omp single
      team = omp_get_num_threads();
#pragma omp for
      for (int i = 0; i < N; ++i)
        s += i % 7;
    }
    sum = s;
  }
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  // CHECK-NEXT: on-server: 1
  printf("sum: %ld\n", sum);
  // CHECK-NEXT: sum: 299995
  printf("cores-limited: %d\n", procs == 1 || team == 1);
  // CHECK-NEXT: cores-limited: 1
  fprintf(stderr, "server procs: %d team: %d\n", procs, team);
  return 0;
}
// INFO: ompdpu devices (from OMPDPU_DEVICES)
// INFO: device 0 127.0.0.1:{{[0-9]+}} {{.*}}ready
// INFO-NOT: unreachable
// INFO2: device 0 127.0.0.1:{{[0-9]+}} {{.*}}ready
// INFO2: device 1 127.0.0.1:1 {{.*}}unreachable
// INFO3: ompdpu devices (from --devices)
// INFO3: device 0 127.0.0.1:{{[0-9]+}} {{.*}}ready
