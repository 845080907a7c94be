/* Workload 2, halo exchange, the MPI ways:
 *
 *   (a) host   K host ranks exchange their border rows with MPI themselves
 *              (Isend/Irecv, sweep the inner points, Waitall):
 *                mpirun -np K suite-halo-mpi-host --way host
 *   (c) dpu    K host ranks and K MPI ranks on the DPUs, launched MPMD:
 *                mpirun -np K suite-halo-mpi-host --way dpu :
 *                       -np K suite-halo-mpi-dpu
 *              host rank k sends its border rows to DPU rank K+k and sweeps
 *              its inner points while the DPU ranks exchange the borders
 *              among themselves and send each host rank its ghost rows back.
 *
 * Built twice from this file (SUITE_ROLE_DPU: the DPU ranks' program). Host
 * rank 0 gathers the grid and prints the record. See halo.h. */
#include <mpi.h>

#include "halo.h"

enum { TAG_TO_NORTH = 1, TAG_TO_SOUTH = 2, TAG_BORDERS = 3, TAG_GHOSTS = 4,
       TAG_GATHER = 5 };

/* The exchange between neighbours within comm (row tiles in rank order):
 * send = north border | south border, recv = north ghost | south ghost. */
static void neighbour_exchange(MPI_Comm comm, int rank, int size, int nx,
                               const float *send, float *recv,
                               MPI_Request req[4]) {
  int n = 0;
  for (int k = 0; k < 4; ++k)
    req[k] = MPI_REQUEST_NULL;
  if (rank > 0) {
    MPI_Irecv(recv, nx, MPI_FLOAT, rank - 1, TAG_TO_SOUTH, comm, &req[n++]);
    MPI_Isend(send, nx, MPI_FLOAT, rank - 1, TAG_TO_NORTH, comm, &req[n++]);
  }
  if (rank + 1 < size) {
    MPI_Irecv(recv + nx, nx, MPI_FLOAT, rank + 1, TAG_TO_NORTH, comm,
              &req[n++]);
    MPI_Isend(send + nx, nx, MPI_FLOAT, rank + 1, TAG_TO_SOUTH, comm,
              &req[n++]);
  }
}

#ifdef SUITE_ROLE_DPU

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int wrank, wsize;
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  MPI_Comm_size(MPI_COMM_WORLD, &wsize);
  halo_opts o = halo_parse(argc, argv);
  int k = wsize / 2;
  if (wsize != 2 * k || wrank < k)
    suite_die("halo DPU ranks: launch K host ranks first, then K DPU ranks");
  MPI_Comm dpus;
  MPI_Comm_split(MPI_COMM_WORLD, 1, wrank, &dpus);
  int me = wrank - k, host = me;
  float *border = (float *)suite_alloc(sizeof(float) * 2 * o.nx);
  float *ghost = (float *)suite_alloc(sizeof(float) * 2 * o.nx);
  memset(ghost, 0, sizeof(float) * 2 * o.nx);
  /* The host ranks exchange probe + warmup + iters times. */
  long total = (long)o.probe + o.warmup + o.iters;
  for (long i = 0; i < total; ++i) {
    MPI_Request req[4];
    MPI_Recv(border, 2 * o.nx, MPI_FLOAT, host, TAG_BORDERS, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    neighbour_exchange(dpus, me, k, o.nx, border, ghost, req);
    MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
    MPI_Send(ghost, 2 * o.nx, MPI_FLOAT, host, TAG_GHOSTS, MPI_COMM_WORLD);
  }
  MPI_Comm_free(&dpus);
  MPI_Finalize();
  return 0;
}

#else /* host ranks */

typedef struct host_ctx {
  int via_dpu; /* way (c) */
  MPI_Comm hosts;
  int rank, size, dpu; /* rank in hosts, world rank of my DPU rank */
  MPI_Request req[4];
} host_ctx;

static void exchange_start(host_ctx *c, halo_tile *h) {
  halo_pack(h);
  if (c->via_dpu) {
    for (int k = 0; k < 4; ++k)
      c->req[k] = MPI_REQUEST_NULL;
    MPI_Irecv(h->recv, 2 * h->t.nx, MPI_FLOAT, c->dpu, TAG_GHOSTS,
              MPI_COMM_WORLD, &c->req[0]);
    MPI_Isend(h->send, 2 * h->t.nx, MPI_FLOAT, c->dpu, TAG_BORDERS,
              MPI_COMM_WORLD, &c->req[1]);
  } else {
    neighbour_exchange(c->hosts, c->rank, c->size, h->t.nx, h->send, h->recv,
                       c->req);
  }
}

static void exchange_finish(host_ctx *c, halo_tile *h) {
  MPI_Waitall(4, c->req, MPI_STATUSES_IGNORE);
  halo_unpack(h);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const char *way = suite_opt(argc, argv, "--way", "host");
  halo_opts o = halo_parse(argc, argv);
  host_ctx c;
  c.via_dpu = strcmp(way, "dpu") == 0;
  if (!c.via_dpu && strcmp(way, "host") != 0)
    suite_die("--way must be host or dpu");
  int wrank, wsize;
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  MPI_Comm_size(MPI_COMM_WORLD, &wsize);
  MPI_Comm_split(MPI_COMM_WORLD, 0, wrank, &c.hosts);
  MPI_Comm_rank(c.hosts, &c.rank);
  MPI_Comm_size(c.hosts, &c.size);
  if (c.size != o.ranks || (c.via_dpu && wsize != 2 * o.ranks) ||
      (!c.via_dpu && wsize != o.ranks))
    suite_die("halo: %d host ranks (and as many DPU ranks with --way dpu) "
              "expected, world has %d",
              o.ranks, wsize);
  c.dpu = o.ranks + c.rank;
  halo_tile h;
  halo_tile_init(&h, &o, c.rank);

  /* Probe 1: the exchange alone (ghosts get the values the first
   * iteration will get; the grid does not change). Probe 2: the sweeps
   * alone, into the next buffer (no swap). Medians of single iterations,
   * started together on all host ranks. */
  double *sample = (double *)suite_alloc(sizeof(double) * (o.probe + 1));
  double t0;
  for (int i = 0; i < o.probe; ++i) {
    MPI_Barrier(c.hosts);
    t0 = MPI_Wtime();
    exchange_start(&c, &h);
    exchange_finish(&c, &h);
    sample[i] = MPI_Wtime() - t0;
  }
  double t_xchg = suite_median(sample, o.probe);
  /* A sample spans two consecutive barrier exits: every host rank swept
   * once in between (ranks sharing a core take turns). */
  MPI_Barrier(c.hosts);
  t0 = MPI_Wtime();
  for (int i = 0; i < o.probe; ++i) {
    dnnk_jacobi_inner(&h.t, h.in, h.out);
    dnnk_jacobi_frame(&h.t, h.in, h.out);
    MPI_Barrier(c.hosts);
    double t1 = MPI_Wtime();
    sample[i] = t1 - t0;
    t0 = t1;
  }
  double t_comp = suite_median(sample, o.probe);

  double t_iter = 0, exposed = 0;
  for (int i = -o.warmup; i < o.iters; ++i) {
    if (i == 0) {
      MPI_Barrier(c.hosts);
      t0 = MPI_Wtime();
      exposed = 0;
    }
    double e0 = MPI_Wtime();
    exchange_start(&c, &h);
    double e1 = MPI_Wtime();
    dnnk_jacobi_inner(&h.t, h.in, h.out);
    double e2 = MPI_Wtime();
    exchange_finish(&c, &h);
    exposed += (e1 - e0) + (MPI_Wtime() - e2);
    dnnk_jacobi_frame(&h.t, h.in, h.out);
    halo_swap(&h);
  }
  MPI_Barrier(c.hosts);
  t_iter = (MPI_Wtime() - t0) / o.iters;

  /* Gather the interior rows to host rank 0, in rank order. */
  uint64_t hash = SUITE_FNV_INIT;
  if (c.rank == 0) {
    hash = halo_hash_rows(hash, &h);
    for (int r = 1; r < c.size; ++r) {
      halo_tile other;
      halo_tile_init(&other, &o, r);
      long n = dnnk_tile_size(&other.t);
      MPI_Recv(other.in, (int)n, MPI_FLOAT, r, TAG_GATHER, c.hosts,
               MPI_STATUS_IGNORE);
      hash = halo_hash_rows(hash, &other);
    }
    halo_report(c.via_dpu ? "mpi" : "host", &o, t_iter, t_comp, t_xchg,
                exposed / o.iters, hash);
  } else {
    MPI_Send(h.in, (int)dnnk_tile_size(&h.t), MPI_FLOAT, 0, TAG_GATHER,
             c.hosts);
  }
  MPI_Comm_free(&c.hosts);
  MPI_Finalize();
  return 0;
}

#endif
