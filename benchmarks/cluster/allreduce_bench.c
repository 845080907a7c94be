/* The trainer's per-step gradient allreduce without the backward pass to
 * hide it: one MPI_Iallreduce per layer with parameters (sizes in floats on
 * the command line, last layer first as the trainer starts them), then
 * MPI_Waitall; repeated, median per step. Also a 1-float allreduce (the
 * latency). Prints one JSON object (rank 0):
 *
 *   mpicc -O2 -o /tmp/allreduce_bench benchmarks/cluster/allreduce_bench.c
 *   mpirun -np 2 /tmp/allreduce_bench 2570 803072 51264 832 > ar2.json
 *
 * (the sizes above: the reference CNN's layers). model.py fit uses it to
 * turn the trainer's exposed allreduce time into an overlap fraction. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, ranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  int n = argc - 1, reps = 30;
  if (n < 1 || n > 64) {
    if (rank == 0)
      fprintf(stderr, "usage: allreduce_bench FLOATS... (one per layer)\n");
    MPI_Finalize();
    return 2;
  }
  long total = 0, sizes[64];
  for (int i = 0; i < n; ++i)
    total += sizes[i] = atol(argv[i + 1]);
  float *buf = calloc((size_t)total, sizeof(float));
  MPI_Request req[64];
  double t[200], lat[200], one = 1.0, sum;
  for (int r = 0; r < reps + 3; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    long off = 0;
    for (int i = 0; i < n; ++i) {
      MPI_Iallreduce(MPI_IN_PLACE, buf + off, (int)sizes[i], MPI_FLOAT, MPI_SUM,
                     MPI_COMM_WORLD, &req[i]);
      off += sizes[i];
    }
    MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
    double t1 = MPI_Wtime();
    if (r >= 3)
      t[r - 3] = t1 - t0;
  }
  for (int r = 0; r < 100; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_Allreduce(&one, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    lat[r] = MPI_Wtime() - t0;
  }
  qsort(t, reps, sizeof t[0], cmp);
  qsort(lat, 100, sizeof lat[0], cmp);
  if (rank == 0)
    printf("{\"kind\": \"allreduce\", \"ranks\": %d, \"calls\": %d, "
           "\"bytes\": %ld, \"step_s\": %.6e, \"latency_s\": %.6e, "
           "\"reps\": %d}\n",
           ranks, n, total * 4, t[reps / 2], lat[50], reps);
  free(buf);
  MPI_Finalize();
  return 0;
}
