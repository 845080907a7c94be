// The Open MPI reference of the micro-benchmarks: ping-pong between two
// ranks, round-trip latency of 8 bytes and bandwidth for the sizes the
// offload benchmark moves. Rank 0 prints one JSON object per measurement.
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPS 7

static int cmpDouble(const void *A, const void *B) {
  double X = *(const double *)A, Y = *(const double *)B;
  return (X > Y) - (X < Y);
}

static double median(double *V) {
  qsort(V, REPS, sizeof(double), cmpDouble);
  return V[REPS / 2];
}

/// Average round-trip time (seconds) of Iters ping-pongs of S bytes.
static double pingPong(char *Buf, long S, int Iters, int Rank) {
  MPI_Barrier(MPI_COMM_WORLD);
  double T0 = MPI_Wtime();
  for (int I = 0; I < Iters; ++I) {
    if (Rank == 0) {
      MPI_Send(Buf, S, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
      MPI_Recv(Buf, S, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(Buf, S, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(Buf, S, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
    }
  }
  return (MPI_Wtime() - T0) / Iters;
}

int main(int Argc, char **Argv) {
  MPI_Init(&Argc, &Argv);
  int Rank, Size;
  MPI_Comm_rank(MPI_COMM_WORLD, &Rank);
  MPI_Comm_size(MPI_COMM_WORLD, &Size);
  if (Size != 2) {
    if (Rank == 0)
      fprintf(stderr, "mpi_pingpong: needs exactly 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int Quick = Argc > 1 && !strcmp(Argv[1], "--quick");
  long Sizes[] = {4 << 10, 64 << 10, 1 << 20, 16 << 20, 256 << 20};
  int NSizes = Quick ? 4 : 5;
  char *Buf = malloc(Sizes[NSizes - 1]);
  memset(Buf, 1, Sizes[NSizes - 1]);
  double V[REPS];
  pingPong(Buf, 8, 1000, Rank);
  for (int R = 0; R < REPS; ++R)
    V[R] = pingPong(Buf, 8, Quick ? 2000 : 20000, Rank) * 1e6;
  if (Rank == 0)
    printf("{\"name\": \"mpi_rtt_8B\", \"unit\": \"us\", \"median\": %.4f}\n",
           median(V));
  for (int K = 0; K < NSizes; ++K) {
    long S = Sizes[K];
    int Iters = S <= (64 << 10) ? 500 : S <= (1 << 20) ? 100 : 8;
    if (S >= (256 << 20))
      Iters = 2;
    for (int R = 0; R < REPS; ++R)
      // Each round trip moves S bytes each way.
      V[R] = 2.0 * S / pingPong(Buf, S, Quick ? (Iters + 3) / 4 : Iters, Rank) /
             1e9;
    if (Rank == 0)
      printf("{\"name\": \"mpi_bw_%ld\", \"unit\": \"GB/s\", \"median\": "
             "%.4f, \"bytes\": %ld}\n",
             S, median(V), S);
  }
  fflush(stdout);
  free(Buf);
  MPI_Finalize();
  return 0;
}
