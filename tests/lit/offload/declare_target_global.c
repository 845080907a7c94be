// declare target globals: initialized from the device image, live on the
// device across regions, reached from the host only with target update.
// RUN: %clang-offload %s -o %t && %run-dpu %t | FileCheck %s
#include <stdio.h>
#include <unistd.h>

#pragma omp declare target
int counter = 5;
int init_value = 1234;
double table[64];
static int hidden = 77; // a file-local (static) declare-target global
#pragma omp end declare target

int main(void) {
  int host_pid = getpid(), dev_pid = -1;
  int seen_init = 0, seen_hidden = 0;

  init_value = 99; // host copy only
  hidden = 11;     // host copy only
#pragma omp target map(from : seen_init, seen_hidden, dev_pid)
  {
    dev_pid = getpid();
    seen_init = init_value;
    seen_hidden = hidden;
    hidden += 1;
  }
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  // CHECK: on-server: 1
  printf("device init_value: %d hidden: %d\n", seen_init, seen_hidden);
  // CHECK-NEXT: device init_value: 1234 hidden: 77

  for (int i = 0; i < 10; ++i) {
#pragma omp target
    counter += 1;
  }
  printf("host counter before update: %d\n", counter);
  // CHECK-NEXT: host counter before update: 5
#pragma omp target update from(counter, hidden)
  printf("host counter after update: %d hidden: %d\n", counter, hidden);
  // CHECK-NEXT: host counter after update: 15 hidden: 78

  for (int i = 0; i < 64; ++i)
    table[i] = i * 0.25;
#pragma omp target update to(table)
  double sum = 0;
#pragma omp target map(from : sum)
  {
    double s = 0;
    for (int i = 0; i < 64; ++i)
      s += table[i];
    sum = s;
    table[0] = 1000.0;
  }
  printf("device table sum: %.2f\n", sum);
  // CHECK-NEXT: device table sum: 504.00
#pragma omp target update from(table[0:1])
  printf("host table[0]: %.1f table[1]: %.2f\n", table[0], table[1]);
  // CHECK-NEXT: host table[0]: 1000.0 table[1]: 0.25
  return 0;
}
