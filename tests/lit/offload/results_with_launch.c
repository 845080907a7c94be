// A region's small map(from:) results are asked for with its launch once
// the plugin has seen the same ones, relative to the kernel's arguments,
// follow its last two launches; a retrieve of a predicted range takes the
// bytes that came back with the launch's reply, and one that was not
// predicted goes as asked. Results that change from one launch to the next
// are never asked for: the launch waits to leave with them (one Batch per
// region). Each mode is one kernel run 20 times; OMPDPU_TRACE=1 counts the
// asked-for results taken and not, and the requests.
//
// persistent: 10 regions with two results (sum, dev_pid), then 10 inside a
// `target data` that keeps `sum` mapped, so those regions retrieve dev_pid
// only. Regions 3-10 take both (16); region 11 takes dev_pid and asked for
// a sum that never came (1 not); region 12 waits for its dev_pid, and
// regions 13-20 ask for it and take it (8). The host's `sum` must not
// change inside the data region.
// RUN: %clang-offload %s -o %t
// RUN: env OMPDPU_TRACE=1 %run-dpu %t persistent 2>%t.p.err | FileCheck %s --check-prefix=PERSISTENT
// RUN: FileCheck %s --check-prefix=PERSISTENT-TRACE < %t.p.err
// PERSISTENT: on-server: 1
// PERSISTENT-NEXT: wrong: 0
// PERSISTENT-TRACE: results asked for with their launch: 25 taken, 1 not
//
// sizes: the result's length changes every region (1-4 elements): nothing
// is asked for, and each region after the first is one Batch (the first
// region's launch leaves alone, as a Run, before its result is known; the
// dev_pid region before the loop does the same): 2 Runs and 21 Batches.
// RUN: env OMPDPU_TRACE=1 %run-dpu %t sizes 2>%t.s.err | FileCheck %s --check-prefix=SIZES
// RUN: FileCheck %s --check-prefix=SIZES-TRACE < %t.s.err
// SIZES: on-server: 1
// SIZES-NEXT: wrong: 0
// SIZES-TRACE-NOT: results asked for
// SIZES-TRACE: Run: 2 requests
// SIZES-TRACE: Batch: 21 requests
//
// moving: the result's offset in its array alternates: nothing is asked
// for (the neighbour's bytes would be), one Batch per region as above.
// RUN: env OMPDPU_TRACE=1 %run-dpu %t moving 2>%t.m.err | FileCheck %s --check-prefix=MOVING
// RUN: FileCheck %s --check-prefix=MOVING-TRACE < %t.m.err
// MOVING: on-server: 1
// MOVING-NEXT: wrong: 0
// MOVING-TRACE-NOT: results asked for
// MOVING-TRACE: Run: 2 requests
// MOVING-TRACE: Batch: 21 requests
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static long sum;
static int dev_pid = -1;

static void add_up(const long *a, int r) {
#pragma omp target map(to : a[0 : 8]) map(from : sum, dev_pid)
  {
    dev_pid = getpid();
    long s = r;
    for (int i = 0; i < 8; ++i)
      s += a[i];
    sum = s;
  }
}

static void fill_first(long *out, int n, int r) {
#pragma omp target map(from : out[0 : n])
  for (int i = 0; i < n; ++i)
    out[i] = 1000 * r + i;
}

static void fill_one(long *out, int k, int r) {
#pragma omp target map(from : out[k : 1])
  out[k] = 1000 * r + k;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  int host_pid = getpid(), wrong = 0;
  long a[8], out[8];
  for (int i = 0; i < 8; ++i)
    a[i] = i; // sums to 28
  if (!strcmp(mode, "persistent")) {
    for (int r = 0; r < 10; ++r) {
      add_up(a, r);
      wrong += sum != 28 + r;
    }
    sum = -1;
#pragma omp target data map(to : sum)
    for (int r = 10; r < 20; ++r) {
      add_up(a, r);
      wrong += sum != -1; // still mapped: nothing comes back
    }
  } else if (!strcmp(mode, "sizes")) {
    dev_pid = -1;
#pragma omp target map(from : dev_pid)
    dev_pid = getpid();
    for (int r = 0; r < 20; ++r) {
      int n = 1 + r % 4;
      for (int i = 0; i < 8; ++i)
        out[i] = -1;
      fill_first(out, n, r);
      for (int i = 0; i < 8; ++i)
        wrong += out[i] != (i < n ? 1000 * r + i : -1);
    }
  } else if (!strcmp(mode, "moving")) {
#pragma omp target map(from : dev_pid)
    dev_pid = getpid();
    for (int r = 0; r < 20; ++r) {
      int k = 1 + r % 2;
      for (int i = 0; i < 8; ++i)
        out[i] = -1;
      fill_one(out, k, r);
      for (int i = 0; i < 8; ++i)
        wrong += out[i] != (i == k ? 1000 * r + k : -1);
    }
  } else {
    fprintf(stderr, "usage: %s persistent|sizes|moving\n", argv[0]);
    return 2;
  }
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  printf("wrong: %d\n", wrong);
  return 0;
}
