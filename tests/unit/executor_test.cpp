// callKernel: an outlined target region gets its pointer arguments in
// order, whether it is called directly (up to 16) or through libffi.
#include "server/executor.h"

#include <gtest/gtest.h>

using ompdpu::server::callKernel;

namespace {
uint64_t Seen[17];
size_t SeenCount = 0;

void record(size_t N, void **A) {
  SeenCount = N;
  for (size_t K = 0; K < N; ++K)
    Seen[K] = reinterpret_cast<uint64_t>(A[K]);
}

using P = void *;
void k0() { record(0, nullptr); }
void k1(P a) {
  P A[] = {a};
  record(1, A);
}
void k2(P a, P b) {
  P A[] = {a, b};
  record(2, A);
}
void k3(P a, P b, P c) {
  P A[] = {a, b, c};
  record(3, A);
}
void k4(P a, P b, P c, P d) {
  P A[] = {a, b, c, d};
  record(4, A);
}
void k5(P a, P b, P c, P d, P e) {
  P A[] = {a, b, c, d, e};
  record(5, A);
}
void k9(P a, P b, P c, P d, P e, P f, P g, P h, P i) {
  P A[] = {a, b, c, d, e, f, g, h, i};
  record(9, A);
}
void k16(P a, P b, P c, P d, P e, P f, P g, P h, P i, P j, P k, P l, P m, P n,
         P o, P p) {
  P A[] = {a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p};
  record(16, A);
}
void k17(P a, P b, P c, P d, P e, P f, P g, P h, P i, P j, P k, P l, P m, P n,
         P o, P p, P q) {
  P A[] = {a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q};
  record(17, A);
}
template <typename F> uint64_t entry(F *Fn) {
  return reinterpret_cast<uint64_t>(Fn);
}
} // namespace

TEST(Executor, KernelsGetTheirArgumentsInOrder) {
  uint64_t Args[17] = {11, 22, 33, 44, 55, 66, 77, 88, 0xffffffffffffull};
  for (size_t K = 9; K < 17; ++K)
    Args[K] = 1000 + K;
  uint64_t Kernels[18] = {entry(k0), entry(k1), entry(k2),
                          entry(k3), entry(k4), entry(k5)};
  Kernels[9] = entry(k9);
  Kernels[16] = entry(k16); // the last called directly
  Kernels[17] = entry(k17); // through libffi
  for (size_t N : {0, 1, 2, 3, 4, 5, 9, 16, 17}) {
    SeenCount = 99;
    callKernel(Kernels[N], Args, N);
    ASSERT_EQ(SeenCount, N);
    for (size_t K = 0; K < N; ++K)
      EXPECT_EQ(Seen[K], Args[K]) << "argument " << K << " of " << N;
  }
}
