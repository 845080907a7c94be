// Micro-benchmarks of the offload path: what an empty target region costs,
// what small mapped data adds, and how fast mapped data moves. Prints one
// JSON object per measurement (medians over repetitions) on stdout. Runs
// against whatever devices libomptarget offers: an ompdpu DPU under
// `ompdpu run`, or LLVM's in-process host plugin for the floor.
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int Quick;

static int cmpDouble(const void *A, const void *B) {
  double X = *(const double *)A, Y = *(const double *)B;
  return (X > Y) - (X < Y);
}

/// Median, min and max of Reps samples.
typedef struct {
  double Median, Min, Max;
} Stats;

static Stats stats(double *V, int N) {
  qsort(V, N, sizeof(double), cmpDouble);
  Stats S = {N % 2 ? V[N / 2] : 0.5 * (V[N / 2 - 1] + V[N / 2]), V[0],
             V[N - 1]};
  return S;
}

static void emit(const char *Name, const char *Unit, Stats S, long Bytes) {
  if (!(S.Median == S.Median) || S.Max > 1e300) {
    fprintf(stderr, "offload_micro: %s: no valid measurement\n", Name);
    return;
  }
  printf("{\"name\": \"%s\", \"unit\": \"%s\", \"median\": %.4f, \"min\": "
         "%.4f, \"max\": %.4f, \"bytes\": %ld}\n",
         Name, Unit, S.Median, S.Min, S.Max, Bytes);
  fflush(stdout);
}

#define REPS 7

static void launchLatency(int Dev) {
  int N = Quick ? 2000 : 20000;
  double V[REPS];
  for (int I = 0; I < 200; ++I) {
#pragma omp target device(Dev)
    {}
  }
  for (int R = 0; R < REPS; ++R) {
    double T0 = omp_get_wtime();
    for (int I = 0; I < N; ++I) {
#pragma omp target device(Dev)
      {}
    }
    V[R] = (omp_get_wtime() - T0) / N * 1e6;
  }
  emit("launch_empty_sync", "us", stats(V, REPS), 0);

  // nowait regions in flight: issue a batch, wait once.
  int Batch = Quick ? 200 : 1000;
  for (int R = 0; R < REPS; ++R) {
    double T0 = omp_get_wtime();
    for (int I = 0; I < Batch; ++I) {
#pragma omp target device(Dev) nowait
      {}
    }
#pragma omp taskwait
    V[R] = Batch / (omp_get_wtime() - T0);
  }
  emit("launch_nowait_rate", "regions/s", stats(V, REPS), 0);
}

static void smallMaps(int Dev) {
  int N = Quick ? 2000 : 20000;
  char A0[64], A1[64], A2[64], A3[64], A4[64], A5[64], A6[64], A7[64];
  memset(A0, 1, 64), memset(A1, 2, 64), memset(A2, 3, 64), memset(A3, 4, 64);
  memset(A4, 5, 64), memset(A5, 6, 64), memset(A6, 7, 64), memset(A7, 8, 64);
  int X = 0;
  double V[REPS];
  for (int R = 0; R < REPS; ++R) {
    double T0 = omp_get_wtime();
    for (int I = 0; I < N; ++I) {
#pragma omp target device(Dev) map(to : A0, A1, A2, A3, A4, A5, A6, A7)     \
    map(from : X)
      X = A0[0] + A1[1] + A2[2] + A3[3] + A4[4] + A5[5] + A6[6] + A7[63];
    }
    V[R] = (omp_get_wtime() - T0) / N * 1e6;
  }
  if (X != 36) {
    fprintf(stderr, "offload_micro: small maps computed %d, expected 36\n", X);
    exit(1);
  }
  emit("small_maps_8x64B", "us", stats(V, REPS), 8 * 64);
}

static void bandwidth(int Dev) {
  static const long Sizes[] = {4 << 10, 64 << 10, 1 << 20, 16 << 20,
                               256 << 20};
  int NSizes = Quick ? 4 : 5;
  long Max = Sizes[NSizes - 1];
  // Huge pages on the host side too, as ucx_perftest's buffers have them:
  // the zero-copy path copies page by page.
  char *B = NULL;
  if (posix_memalign((void **)&B, 2 << 20, Max))
    exit(1);
  madvise(B, Max, MADV_HUGEPAGE);
  for (long I = 0; I < Max; ++I)
    B[I] = (char)I;
#pragma omp target enter data device(Dev) map(to : B[0:Max])
  char *D = omp_target_alloc(Max, Dev);
  for (int K = 0; K < NSizes; ++K) {
    long S = Sizes[K];
    int Iters = S <= (64 << 10) ? (Quick ? 200 : 2000)
                : S <= (1 << 20) ? (Quick ? 50 : 300)
                                 : (Quick ? 5 : 20);
    if (S >= (256 << 20))
      Iters = 3;
    double Up[REPS], Down[REPS], Mcpy[REPS];
    for (int R = 0; R < REPS; ++R) {
      double T0 = omp_get_wtime();
      for (int I = 0; I < Iters; ++I) {
#pragma omp target update device(Dev) to(B[0:S])
      }
      double T1 = omp_get_wtime();
      for (int I = 0; I < Iters; ++I) {
#pragma omp target update device(Dev) from(B[0:S])
      }
      double T2 = omp_get_wtime();
      for (int I = 0; I < Iters; ++I)
        omp_target_memcpy(D, B, S, 0, 0, Dev, omp_get_initial_device());
      double T3 = omp_get_wtime();
      Up[R] = S * (double)Iters / (T1 - T0) / 1e9;
      Down[R] = S * (double)Iters / (T2 - T1) / 1e9;
      Mcpy[R] = S * (double)Iters / (T3 - T2) / 1e9;
    }
    char Name[64];
    snprintf(Name, sizeof(Name), "h2d_update_%ld", S);
    emit(Name, "GB/s", stats(Up, REPS), S);
    snprintf(Name, sizeof(Name), "d2h_update_%ld", S);
    emit(Name, "GB/s", stats(Down, REPS), S);
    snprintf(Name, sizeof(Name), "h2d_memcpy_%ld", S);
    emit(Name, "GB/s", stats(Mcpy, REPS), S);
  }
  // The data must have arrived intact.
#pragma omp target update device(Dev) from(B[0:Max])
  for (long I = 0; I < Max; ++I)
    if (B[I] != (char)I) {
      fprintf(stderr, "offload_micro: byte %ld corrupted\n", I);
      exit(1);
    }
  omp_target_free(D, Dev);
#pragma omp target exit data device(Dev) map(delete : B[0:Max])
  free(B);
}

static void deviceToDevice(int D0, int D1) {
  static const long Sizes[] = {64 << 10, 1 << 20, 16 << 20};
  long Max = 16 << 20;
  char *A = omp_target_alloc(Max, D0), *B = omp_target_alloc(Max, D1);
  for (int K = 0; K < 3; ++K) {
    long S = Sizes[K];
    int Iters = S < (1 << 20) ? (Quick ? 100 : 1000) : (Quick ? 5 : 40);
    double V[REPS];
    for (int R = 0; R < REPS; ++R) {
      double T0 = omp_get_wtime();
      for (int I = 0; I < Iters; ++I)
        omp_target_memcpy(B, A, S, 0, 0, D1, D0);
      V[R] = S * (double)Iters / (omp_get_wtime() - T0) / 1e9;
    }
    char Name[64];
    snprintf(Name, sizeof(Name), "d2d_memcpy_%ld", S);
    emit(Name, "GB/s", stats(V, REPS), S);
  }
  omp_target_free(A, D0);
  omp_target_free(B, D1);
}

static void hostMemcpy(void) {
  long S = 64 << 20;
  char *A = NULL, *B = NULL;
  if (posix_memalign((void **)&A, 2 << 20, S) ||
      posix_memalign((void **)&B, 2 << 20, S))
    exit(1);
  madvise(A, S, MADV_HUGEPAGE);
  madvise(B, S, MADV_HUGEPAGE);
  memset(A, 1, S);
  memset(B, 2, S);
  double V[REPS];
  volatile char Sink = 0;
  for (int R = 0; R < REPS; ++R) {
    double T0 = omp_get_wtime();
    for (int I = 0; I < 4; ++I) {
      A[I] = (char)R; // keep the copies from being merged or dropped
      memcpy(B, A, S);
      Sink += B[I];
    }
    V[R] = S * 4.0 / (omp_get_wtime() - T0) / 1e9;
  }
  emit("host_memcpy_64MiB", "GB/s", stats(V, REPS), S);
  free(A);
  free(B);
}

int main(int Argc, char **Argv) {
  const char *Only = "all";
  for (int I = 1; I < Argc; ++I) {
    if (!strcmp(Argv[I], "--quick"))
      Quick = 1;
    else
      Only = Argv[I];
  }
  int Dev = 0;
  int OnDevice = 0;
#pragma omp target device(Dev) map(from : OnDevice)
  OnDevice = getpid();
  fprintf(stderr, "offload_micro: %d device(s); regions run in process %d, "
                  "host process %d\n",
          omp_get_num_devices(), OnDevice, (int)getpid());
  if (!strcmp(Only, "all") || !strcmp(Only, "launch"))
    launchLatency(Dev);
  if (!strcmp(Only, "all") || !strcmp(Only, "maps"))
    smallMaps(Dev);
  if (!strcmp(Only, "all") || !strcmp(Only, "bandwidth"))
    bandwidth(Dev);
  if (!strcmp(Only, "memcpy"))
    hostMemcpy();
  if (!strcmp(Only, "d2d") && omp_get_num_devices() >= 2)
    deviceToDevice(0, 1);
  return 0;
}
