// The README's demo: a target region with mapped data and a parallel loop,
// offloaded to a DPU. It prints where the region ran, so the output proves
// that the work left the host process.
#include <ompdpu.h>
#include <omp.h>
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
  double T0 = omp_get_wtime();
#pragma omp target device(Dpu) map(to : X[0:N]) map(tofrom : Y[0:N])        \
    map(from : ServerPid, Threads, Host[0:64])
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
  double T1 = omp_get_wtime();
  int Ok = 1;
  for (int I = 0; I < N; ++I)
    Ok &= Y[I] == 2.0f * (float)I + 1.0f;
  printf("saxpy of %d floats on OpenMP device %d (DPU 0 of %d): %s\n", N, Dpu,
         ompdpu_num_devices(), Ok ? "correct" : "WRONG");
  printf("ran in server process %d on host '%s' with %d threads; this "
         "program is process %d\n",
         ServerPid, Host, Threads, (int)getpid());
  printf("round trip with 32 MiB of mapped data: %.1f ms\n", (T1 - T0) * 1e3);
  free(X);
  free(Y);
  return Ok && ServerPid != getpid() ? 0 : 1;
}
