// A short kernel runs on the server straight from the message that asks for
// it, once it is in its queue's turn. Its Run travels on the control
// endpoint while a 1 MiB map(to:) travels on the bulk endpoint, so the Run
// can arrive first: it must still wait, and every region must see the data
// of its own iteration.
// RUN: %clang-offload %s -o %t && %run-dpu %t | FileCheck %s
#include <stdio.h>
#include <unistd.h>

#define N (1 << 18) // ints: 1 MiB
#define ROUNDS 40

int main(void) {
  static int buf[N];
  int host_pid = getpid();
  int stale = 0, dev_pid = -1;
  for (int round = 1; round <= ROUNDS; ++round) {
    for (int i = 0; i < N; i += 1024)
      buf[i] = round;
    buf[N - 1] = round;
    int first = -1, last = -1;
#pragma omp target map(to : buf[0:N]) map(from : first, last, dev_pid)
    {
      first = buf[0];
      last = buf[N - 1];
      dev_pid = getpid();
    }
    stale += first != round || last != round;
  }
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  // CHECK: on-server: 1
  printf("stale regions: %d of %d\n", stale, ROUNDS);
  // CHECK-NEXT: stale regions: 0 of 40
  return 0;
}
