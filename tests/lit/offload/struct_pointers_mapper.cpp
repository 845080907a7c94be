// declare mapper on nested structs with pointer members, with enter data,
// a region, and exit data from: the host's pointers must be the host's
// again afterwards (see struct_pointers_back.c).
// RUN: %clangxx-offload %s -o %t && %run-dpu %t | FileCheck %s
#include <cstdio>
#include <unistd.h>

typedef struct {
  int len;
  double *data;
} Vec;
#pragma omp declare mapper(Vec v) map(v.len) map(tofrom : v.data [0:v.len])

typedef struct {
  long id;
  Vec w;
  Vec g;
} Model;
#pragma omp declare mapper(Model m) map(m.id, m.w, m.g)

int main() {
  int HostPid = getpid(), DevPid = -1;
  double W[4] = {0}, G[3] = {0};
  Model M = {42, {4, W}, {3, G}};
#pragma omp target enter data map(to : M)
#pragma omp target map(from : DevPid)
  {
    DevPid = getpid();
    for (int I = 0; I < M.w.len; ++I)
      M.w.data[I] = I + 0.5;
    for (int I = 0; I < M.g.len; ++I)
      M.g.data[I] = -I;
    M.id = 43;
  }
#pragma omp target exit data map(from : M)
  // CHECK: mapper: pointers kept 1 1 id 43 w[3] 3.5 g[2] -2
  std::printf("mapper: pointers kept %d %d id %ld w[3] %.1f g[2] %.0f\n",
              M.w.data == W, M.g.data == G, M.id, M.w.data == W ? W[3] : -1.0,
              M.g.data == G ? G[2] : -1.0);
  // CHECK-NEXT: on-server: 1
  std::printf("on-server: %d\n", DevPid > 0 && DevPid != HostPid);
  return 0;
}
