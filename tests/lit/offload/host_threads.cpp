// Four host threads (std::thread) offload at the same time, each with its
// own data, many regions each; all land in the same server session.
// RUN: %clangxx-offload %s -o %t -pthread && %run-dpu %t | FileCheck %s
#include <atomic>
#include <cstdio>
#include <thread>
#include <unistd.h>
#include <vector>

constexpr int kThreads = 4;
constexpr int kRegions = 200;
constexpr int kN = 1024;

struct Result {
  long sum = 0;
  int pid = -1;
  int bad = 0;
};

static void worker(int id, Result *res) {
  std::vector<int> buf(kN);
  int *p = buf.data();
  for (int i = 0; i < kN; ++i)
    p[i] = id;
  int pid = -1;
  for (int r = 0; r < kRegions; ++r) {
#pragma omp target map(tofrom : p[0:kN]) map(from : pid) firstprivate(id)
    {
      pid = getpid();
      for (int i = 0; i < kN; ++i)
        p[i] += id + 1;
    }
    if (r == 0)
      res->pid = pid;
    else if (pid != res->pid)
      res->bad++;
  }
  long s = 0;
  for (int i = 0; i < kN; ++i) {
    s += p[i];
    if (p[i] != id + kRegions * (id + 1))
      res->bad++;
  }
  res->sum = s;
}

int main() {
  int host_pid = getpid();
  Result res[kThreads];
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back(worker, t, &res[t]);
  for (auto &th : threads)
    th.join();

  bool on_server = true, same = true;
  for (int t = 0; t < kThreads; ++t) {
    on_server = on_server && res[t].pid > 0 && res[t].pid != host_pid;
    same = same && res[t].pid == res[0].pid;
  }
  std::printf("on-server: %d\n", on_server);
  // CHECK: on-server: 1
  std::printf("same-session: %d\n", same);
  // CHECK-NEXT: same-session: 1
  for (int t = 0; t < kThreads; ++t)
    std::printf("thread %d: sum %ld bad %d\n", t, res[t].sum, res[t].bad);
  // element = id + 200 * (id + 1); sum = 1024 * element
  // CHECK-NEXT: thread 0: sum 204800 bad 0
  // CHECK-NEXT: thread 1: sum 410624 bad 0
  // CHECK-NEXT: thread 2: sum 616448 bad 0
  // CHECK-NEXT: thread 3: sum 822272 bad 0
  return 0;
}
