// libomp's registration object is named after the pid and uid alone
// (/dev/shm/__KMP_REGISTERED_LIB_<pid>_<uid>): another user who creates the
// names of the next pids in advance would make libomp abort the sessions of
// that account ("Can't open SHM"). A root server removes such an object
// before the session starts. Here the objects of the daemon account's next
// 3000 pids belong to nobody; daemon's session runs parallel regions.
// REQUIRES: root, server-reachable-by-others
// UNSUPPORTED: arm-vm
// RUN: %clang-offload %s -o %t
// RUN: %python %S/Inputs/plant_registrations.py plant 1 3000 %t.state
// RUN: %python %S/Inputs/with_server.py --key-owner daemon %server -- \
// RUN:   env OMP_TARGET_OFFLOAD=mandatory %ompdpu run --devices {addr} -- %t > %t.out 2>&1; \
// RUN:   %python %S/Inputs/plant_registrations.py remove 1 3000 %t.state
// RUN: FileCheck %s < %t.out
// CHECK: session uid 1, threads 2, sum 499500, on-server: 1
#include <omp.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
  int pid = 0, uid = -1, threads = 0;
  long sum = 0;
#pragma omp target map(from : pid, uid, threads, sum)
  {
    pid = getpid();
    uid = getuid();
#pragma omp parallel num_threads(2) reduction(+ : sum)
    {
#pragma omp single
      threads = omp_get_num_threads();
#pragma omp for
      for (int i = 0; i < 1000; ++i)
        sum += i;
    }
  }
  printf("session uid %d, threads %d, sum %ld, on-server: %d\n", uid, threads,
         sum, pid != getpid());
  return 0;
}
