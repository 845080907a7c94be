// C++ global constructors in device code: a global object with a constructor
// inside a declare target region is constructed when the image is loaded in
// the server process, and its state is read from a target region.
// RUN: %clangxx-offload %s -o %t && %run-dpu %t | FileCheck %s
#include <cstdio>
#include <unistd.h>

#pragma omp declare target
int ctor_runs = 0;

struct Table {
  int pid;      // process the constructor ran in
  int squares[16];
  double scale;
  Table() : pid(getpid()), scale(1.5) {
    for (int i = 0; i < 16; ++i)
      squares[i] = i * i;
    ++ctor_runs;
  }
  int sum() const {
    int s = 0;
    for (int i = 0; i < 16; ++i)
      s += squares[i];
    return s;
  }
};

Table table;

struct Registry {
  int entries;
  Registry() : entries(table.squares[3] + 1) {} // depends on table (same TU order)
};
Registry registry;
#pragma omp end declare target

int main() {
  int host_pid = getpid(), dev_pid = -1;
  int ctor_pid = -1, runs = -1, sum = -1, entries = -1;
  double scale = 0;

#pragma omp target map(from : dev_pid, ctor_pid, runs, sum, entries, scale)
  {
    dev_pid = getpid();
    ctor_pid = table.pid;
    runs = ctor_runs;
    sum = table.sum();
    entries = registry.entries;
    scale = table.scale;
  }
  std::printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  // CHECK: on-server: 1
  std::printf("ctor-on-server: %d\n", ctor_pid == dev_pid && ctor_pid != host_pid);
  // CHECK-NEXT: ctor-on-server: 1
  std::printf("device ctor runs: %d sum: %d entries: %d scale: %.1f\n", runs, sum,
              entries, scale);
  // CHECK-NEXT: device ctor runs: 1 sum: 1240 entries: 10 scale: 1.5
  // The host has its own copy, built by the host's constructor.
  std::printf("host table.pid is host: %d host ctor runs: %d\n",
              table.pid == host_pid, ctor_runs);
  // CHECK-NEXT: host table.pid is host: 1 host ctor runs: 1
  return 0;
}
