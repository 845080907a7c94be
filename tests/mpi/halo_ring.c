// MPI mode of ompdpu-server: target regions on two DPUs (server ranks 0 and
// 1 of one MPI job) exchange data with MPI among themselves, without the
// host. Each device sends its rank's block to the other and checks what it
// received; the host checks the results and that the regions ran elsewhere.
#include <omp.h>
#include <ompdpu_mpi.h>
#include <stdio.h>
#include <unistd.h>

#define N 4096

#pragma omp declare target
static void exchange(float *Mine, float *Theirs, int *Rank, int *Pid) {
  MPI_Comm World = ompdpu_mpi_comm_world();
  MPI_Comm_rank(World, Rank);
  int Peer = 1 - *Rank;
  for (int I = 0; I < N; ++I)
    Mine[I] = (float)(*Rank * 100000 + I);
  MPI_Sendrecv(Mine, N, ompdpu_mpi_float(), Peer, 1, Theirs, N,
               ompdpu_mpi_float(), Peer, 1, World, MPI_STATUS_IGNORE);
  *Pid = getpid();
}
#pragma omp end declare target

int main(void) {
  static float A0[N], B0[N], A1[N], B1[N];
  int R0 = -1, R1 = -1, P0 = 0, P1 = 0;
#pragma omp target device(1) map(from : A1, B1, R1, P1) nowait
  exchange(A1, B1, &R1, &P1);
#pragma omp target device(0) map(from : A0, B0, R0, P0) nowait
  exchange(A0, B0, &R0, &P0);
#pragma omp taskwait
  int Ok = 1;
  for (int I = 0; I < N; ++I)
    Ok &= B0[I] == A1[I] && B1[I] == A0[I];
  printf("ranks: %d %d\n", R0, R1);
  printf("exchange: %s\n", Ok ? "correct" : "WRONG");
  printf("on-server: %d\n", P0 != getpid() && P1 != getpid() && P0 != P1);
  return !Ok;
}
