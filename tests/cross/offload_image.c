/* Smallest useful OpenMP offload program for the DPU: one target region with a
 * parallel loop that calls a `declare target` function. scripts/cross-build-aarch64.sh
 * compiles it with -fopenmp-targets=aarch64-unknown-linux-gnu and checks that the
 * embedded device image is an AArch64 ELF file (it is not run: see DESIGN.md). */
#include <stdio.h>

#pragma omp declare target
static double scale(double x, double a) { return a * x + 1.0; }
#pragma omp end declare target

int main(void) {
  enum { N = 1024 };
  double in[N], out[N];
  for (int i = 0; i < N; i++) in[i] = i;

#pragma omp target map(to: in[0:N]) map(from: out[0:N])
#pragma omp parallel for
  for (int i = 0; i < N; i++) out[i] = scale(in[i], 2.0);

  double sum = 0;
  for (int i = 0; i < N; i++) sum += out[i];
  printf("sum = %.1f (expect %.1f)\n", sum, (double)N * (N - 1) + N);
  return sum == (double)N * (N - 1) + N ? 0 : 1;
}
