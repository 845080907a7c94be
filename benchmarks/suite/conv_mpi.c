/* Workload 3, way (c): an MPI rank on the DPU computes the layer. Built
 * twice, as the two programs of an MPMD job:
 *
 *   mpirun -np 1 suite-conv-mpi-host ARGS : -np 1 suite-conv-mpi-dpu ARGS
 *
 * Per step the host rank sends x, w, bias, dy (one message each, from and
 * into the arrays themselves) and receives y | dx | dw | db in one message;
 * the DPU rank keeps its workspace across steps. Same checksum as conv.c. */
#include <mpi.h>

#include "conv.h"

enum { TAG_X = 1, TAG_W, TAG_B, TAG_DY, TAG_OUT, TAG_ISA };

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2)
    suite_die("conv MPI baseline: run 1 host rank and 1 DPU rank");
  conv_opts o = conv_parse(argc, argv);
  conv_data c;
  conv_data_init(&c, conv_layer(o.layer, o.batch));
  int k = c.d.k;
#ifdef SUITE_ROLE_DPU
  int isa = conv_isa();
  MPI_Send(&isa, 1, MPI_INT, 0, TAG_ISA, MPI_COMM_WORLD);
  float *ws = (float *)suite_alloc(sizeof(float) * c.n.ws);
  for (int s = -o.warmup; s < o.steps; ++s) {
    MPI_Request r[4];
    MPI_Irecv(c.x, (int)c.n.x, MPI_FLOAT, 0, TAG_X, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(c.w, (int)c.n.w, MPI_FLOAT, 0, TAG_W, MPI_COMM_WORLD, &r[1]);
    MPI_Irecv(c.bias, k, MPI_FLOAT, 0, TAG_B, MPI_COMM_WORLD, &r[2]);
    MPI_Irecv(c.dy, (int)c.n.y, MPI_FLOAT, 0, TAG_DY, MPI_COMM_WORLD, &r[3]);
    MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
    conv_passes(&c.d, c.x, c.w, c.bias, c.dy, c.y, c.dx, c.dw, c.db, ws);
    MPI_Send(c.out, (int)c.nout, MPI_FLOAT, 0, TAG_OUT, MPI_COMM_WORLD);
  }
#else
  int isa = 0;
  MPI_Recv(&isa, 1, MPI_INT, 1, TAG_ISA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  double *step_s = (double *)suite_alloc(sizeof(double) * (o.steps + 1));
  uint64_t hash = SUITE_FNV_INIT;
  double l2 = 0.0;
  for (int s = -o.warmup; s < o.steps; ++s) {
    double t0 = suite_now();
    MPI_Request r[5];
    MPI_Irecv(c.out, (int)c.nout, MPI_FLOAT, 1, TAG_OUT, MPI_COMM_WORLD,
              &r[4]);
    MPI_Isend(c.x, (int)c.n.x, MPI_FLOAT, 1, TAG_X, MPI_COMM_WORLD, &r[0]);
    MPI_Isend(c.w, (int)c.n.w, MPI_FLOAT, 1, TAG_W, MPI_COMM_WORLD, &r[1]);
    MPI_Isend(c.bias, k, MPI_FLOAT, 1, TAG_B, MPI_COMM_WORLD, &r[2]);
    MPI_Isend(c.dy, (int)c.n.y, MPI_FLOAT, 1, TAG_DY, MPI_COMM_WORLD, &r[3]);
    MPI_Waitall(5, r, MPI_STATUSES_IGNORE);
    double t = suite_now() - t0;
    if (s >= 0) {
      step_s[s] = t;
      hash = conv_after_step(&c, hash, &l2);
    }
  }
  conv_report("mpi", &o, &c, step_s, hash, l2, isa);
#endif
  MPI_Finalize();
  return 0;
}
