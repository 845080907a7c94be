// A kernel that writes through a null pointer kills its session process on
// the server: the program gets `session process died: SIGSEGV ... while
// running the target region in main (kernel_segfault.c:LINE)` and a non-zero
// exit. The same server (this test's own) then serves a second, healthy
// program correctly, and is still running at the end.
// RUN: %clang-offload %s -DCRASH -o %t.crash
// RUN: %clang-offload %s -o %t.ok
// RUN: %fault --fresh-server --check-server --limit 120 -- \
// RUN:   sh -c '%t.crash; echo crash-exit=$?; %t.ok' 2>&1 | FileCheck %s
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#define N 1000

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  int host_pid = getpid(), dev_pid = -1;
#pragma omp target map(from : dev_pid)
  dev_pid = getpid();
#ifdef CRASH
  printf("crash program warm-up on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  // CHECK: crash program warm-up on-server: 1
  int value = 42;
  // The region as its user wrote it (function, file and line), not clang's name:
  // CHECK: ompdpu error: device 0 ({{[0-9.]+}}:{{[0-9]+}}): session process died: SIGSEGV (Segmentation fault) while running the target region in main (kernel_segfault.c:[[@LINE+1]]){{$}}
#pragma omp target map(to : value)
  {
    volatile uintptr_t addr = 0; // opaque to the compiler: a real store to 0
    *(int *)addr = value;
  }
  printf("crash program survived the null write\n");
  return 0;
  // CHECK-NOT: survived the null write
  // CHECK: crash-exit={{[1-9][0-9]*}}
#else
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  // CHECK-NEXT: on-server: 1
  int a[N];
  for (int i = 0; i < N; ++i)
    a[i] = i;
  long sum = 0;
#pragma omp target map(to : a) map(from : sum)
  {
    long s = 0;
    for (int i = 0; i < N; ++i)
      s += 3L * a[i];
    sum = s;
  }
  printf("sum: %ld\n", sum);
  // CHECK-NEXT: sum: 1498500
  return 0;
  // CHECK: server alive: 1
  // CHECK-NEXT: exit-status: 0
#endif
}
