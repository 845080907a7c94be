// The README's demo: a target region with mapped data and a parallel loop,
// offloaded to a DPU. It prints where the region ran, so the output proves
// that the work left the host process.
#include <omp.h>
#include <ompdpu.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(void) {
  const int N = 1 << 22;
  float *X = malloc(N * sizeof(float)), *Y = malloc(N * sizeof(float));
  for (int I = 0; I < N; ++I) {
    X[I] = (float)I;
    Y[I] = 1.0f;
  }
  int Dpu = ompdpu_device(0);
  if (Dpu < 0) {
    fprintf(stderr, "demo: no DPU found (run it with `ompdpu run`)\n");
    return 1;
  }
  int ServerPid = 0, Threads = 0;
  char Host[64] = "";
  // Twice: the first region also loads the device image onto the DPU.
  double Ms[2];
  int Ok = 1;
  for (int Run = 0; Run < 2; ++Run) {
    for (int I = 0; I < N; ++I)
      Y[I] = 1.0f;
    double T0 = omp_get_wtime();
#pragma omp target device(Dpu) map(to                                          \
                                   : X [0:N]) map(tofrom                       \
                                                  : Y [0:N])                   \
    map(from                                                                   \
        : ServerPid, Threads, Host [0:64])
    {
      ServerPid = getpid();
      gethostname(Host, sizeof(Host) - 1);
#pragma omp parallel
      {
#pragma omp single
        Threads = omp_get_num_threads();
#pragma omp for
        for (int I = 0; I < N; ++I)
          Y[I] = 2.0f * X[I] + Y[I];
      }
    }
    Ms[Run] = (omp_get_wtime() - T0) * 1e3;
    for (int I = 0; I < N; ++I)
      Ok &= Y[I] == 2.0f * (float)I + 1.0f;
  }
  printf("saxpy of %d floats on OpenMP device %d (DPU 0 of %d): %s\n", N, Dpu,
         ompdpu_num_devices(), Ok ? "correct" : "WRONG");
  printf("ran in server process %d on host '%s' with %d thread%s; this "
         "program is process %d\n",
         ServerPid, Host, Threads, Threads == 1 ? "" : "s", (int)getpid());
  printf("the region, 16 MiB to the DPU and 16 MiB both ways: %.1f ms the "
         "first time (with loading the device image), %.1f ms the second\n",
         Ms[0], Ms[1]);
  free(X);
  free(Y);
  return Ok && ServerPid != getpid() ? 0 : 1;
}
