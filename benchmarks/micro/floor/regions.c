/* The two regions of ompdpu-offload-micro's launch and small-maps
 * benchmarks, timed in a plain loop: prints one line per round,
 * "empty_us <t> maps_us <t>", microseconds per region. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double nowUs(void) {
  struct timespec T;
  clock_gettime(CLOCK_MONOTONIC, &T);
  return T.tv_sec * 1e6 + T.tv_nsec * 1e-3;
}

/* Regions live in functions of their own: clang 16 allocates a region's
 * argument arrays on the stack anew in each iteration of a loop around it,
 * which exhausts the stack after some 100,000 iterations. */
__attribute__((noinline)) static void emptyRegion(void) {
#pragma omp target
  {}
}

__attribute__((noinline)) static int mapsRegion(char *A0, char *A1, char *A2,
                                                char *A3, char *A4, char *A5,
                                                char *A6, char *A7) {
  int R = 0;
#pragma omp target map(to : A0[0:64], A1[0:64], A2[0:64], A3[0:64],          \
                           A4[0:64], A5[0:64], A6[0:64], A7[0:64])             \
    map(from : R)
  R = 1;
  return R;
}

int main(int Argc, char **Argv) {
  int N = Argc > 1 ? atoi(Argv[1]) : 200000;
  int Rounds = Argc > 2 ? atoi(Argv[2]) : 5;
  char *A[8];
  for (int I = 0; I < 8; ++I)
    A[I] = calloc(64, 1);
  for (int I = 0; I < 1000; ++I) /* warm up */
    mapsRegion(A[0], A[1], A[2], A[3], A[4], A[5], A[6], A[7]);
  for (int Round = 0; Round < Rounds; ++Round) {
    double T0 = nowUs();
    for (int I = 0; I < N; ++I)
      emptyRegion();
    double T1 = nowUs();
    for (int I = 0; I < N; ++I)
      mapsRegion(A[0], A[1], A[2], A[3], A[4], A[5], A[6], A[7]);
    double T2 = nowUs();
    printf("empty_us %.4f maps_us %.4f\n", (T1 - T0) / N, (T2 - T1) / N);
  }
  return 0;
}
