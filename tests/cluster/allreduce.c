/* MPI_Allreduce across the testbed's nodes: each rank names its host; the
 * exit status says whether the sum is right. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv) {
  int rank, size, one, sum = 0;
  char host[64];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  gethostname(host, sizeof host);
  one = rank + 1;
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  printf("rank %d of %d on %s: sum %d\n", rank, size, host, sum);
  MPI_Finalize();
  return sum == size * (size + 1) / 2 ? 0 : 1;
}
