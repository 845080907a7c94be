// Dynamic memory and the C library on the device: malloc/calloc/realloc/free
// inside target regions, qsort with a comparison callback, snprintf into a
// mapped buffer, and a moderately large stack frame.
// RUN: %clang-offload %s -o %t && %run-dpu %t | FileCheck %s
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#pragma omp declare target
static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}
#pragma omp end declare target

int main(void) {
  int host_pid = getpid(), dev_pid = -1;
  long heap_sum = 0;
  int sorted_ok = 0, median = 0, stack_val = 0;
  char text[64] = {0};

#pragma omp target map(from : heap_sum, sorted_ok, median, stack_val, text, dev_pid)
  {
    dev_pid = getpid();
    size_t n = 1 << 20;
    int *p = (int *)malloc(n * sizeof(int));
    for (size_t i = 0; i < n; ++i)
      p[i] = (int)(i & 1023);
    p = (int *)realloc(p, 2 * n * sizeof(int));
    for (size_t i = n; i < 2 * n; ++i)
      p[i] = 1;
    long s = 0;
    for (size_t i = 0; i < 2 * n; ++i)
      s += p[i];
    heap_sum = s;
    free(p);

    int *q = (int *)calloc(1001, sizeof(int));
    for (int i = 0; i < 1001; ++i)
      q[i] = (i * 37) % 1001;
    qsort(q, 1001, sizeof(int), cmp_int);
    int ok = 1;
    for (int i = 1; i < 1001; ++i)
      if (q[i - 1] > q[i])
        ok = 0;
    sorted_ok = ok;
    median = q[500];
    free(q);

    volatile char frame[64 * 1024];
    for (int i = 0; i < (int)sizeof frame; ++i)
      frame[i] = (char)(i & 0x7f);
    int sv = 0;
    for (int i = 0; i < (int)sizeof frame; i += 4096)
      sv += frame[i + 5];
    stack_val = sv;

    snprintf(text, sizeof text, "pid-is-not-zero=%d n=%zu", getpid() != 0, n);
  }
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  // CHECK: on-server: 1
  printf("heap: %ld sorted: %d median: %d stack: %d\n", heap_sum, sorted_ok, median,
         stack_val);
  // CHECK-NEXT: heap: 537395200 sorted: 1 median: 500 stack: 80
  printf("text: %s\n", text);
  // CHECK-NEXT: text: pid-is-not-zero=1 n=1048576
  return 0;
}
