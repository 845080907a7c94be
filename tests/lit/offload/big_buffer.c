// One 256 MiB buffer to the device and back: the device checks the host's
// data (checksum), transforms it in place in parallel, and the host checks
// every element of the result.
// RUN: %clang-offload %s -o %t && %run-dpu %t | FileCheck %s
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define BYTES (256UL << 20)
#define N (BYTES / sizeof(uint32_t))

static inline uint32_t pattern(uint64_t i) { return (uint32_t)(i * 2654435761u) ^ (uint32_t)(i >> 7); }

int main(void) {
  uint32_t *buf = malloc(BYTES);
  if (!buf) {
    printf("malloc failed\n");
    return 1;
  }
  uint64_t host_sum = 0;
  for (uint64_t i = 0; i < N; ++i) {
    buf[i] = pattern(i);
    host_sum += buf[i] ^ i;
  }
  int host_pid = getpid(), dev_pid = -1;
  uint64_t dev_sum = 0;

#pragma omp target map(tofrom : buf[0:N]) map(from : dev_sum, dev_pid)
  {
    dev_pid = getpid();
    uint64_t s = 0;
#pragma omp parallel for reduction(+ : s)
    for (uint64_t i = 0; i < N; ++i) {
      s += buf[i] ^ i;
      buf[i] = buf[i] * 3u + 1u;
    }
    dev_sum = s;
  }

  uint64_t bad = 0, out_sum = 0;
  for (uint64_t i = 0; i < N; ++i) {
    uint32_t want = pattern(i) * 3u + 1u;
    if (buf[i] != want)
      ++bad;
    out_sum += buf[i];
  }
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  // CHECK: on-server: 1
  printf("elements: %lu\n", (unsigned long)N);
  // CHECK-NEXT: elements: 67108864
  printf("device checksum: %llu matches host: %d\n", (unsigned long long)dev_sum,
         dev_sum == host_sum);
  // CHECK-NEXT: device checksum: [[SUM:[0-9]+]] matches host: 1
  printf("result checksum: %llu bad: %llu\n", (unsigned long long)out_sum,
         (unsigned long long)bad);
  // CHECK-NEXT: result checksum: [[OUT:[0-9]+]] bad: 0
  free(buf);
  return 0;
}
