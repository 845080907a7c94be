/* Workload 2, halo exchange, way (b): each host rank offloads its halo
 * exchange to its DPU with OpenMP while it sweeps its inner points; the
 * DPUs exchange the border rows among themselves.
 *
 * suite-halo-offload (one process, K tiles, K DPUs): per iteration the
 * packed borders of tile k go to DPU k (omp_target_memcpy), DPU k copies
 * them straight to its neighbours' DPUs (omp_target_memcpy between two
 * devices: ompdpu copies server to server, the data does not come back
 * through the host) in a task on the second thread of a team of two (see
 * augment.c for why not a hidden-helper `nowait` on a one-core host) while
 * the first sweeps, and each DPU's ghost rows come back to the host.
 *
 * suite-halo-offload-mpi (SUITE_HALO_MPI; K processes, one DPU each, the
 * DPU servers one MPI job: `mpirun -np K ompdpu-server --mpi ...`): split
 * phase, like MPI_Isend/MPI_Wait but on the DPUs. Before the inner sweep a
 * target region maps the borders to the DPU and posts the DPUs' exchange
 * (MPI_Irecv/MPI_Isend among the servers, server rank r is host rank r's
 * DPU; the requests stay in a device global); after it, a second region
 * completes it (MPI_Waitall) and maps the ghosts back. Two short
 * synchronous regions on the host's own thread, nothing in between: the
 * exchange progresses on the DPUs. The host processes are an MPI job of
 * their own only to gather the grid at the end. See halo.h. */
#include <omp.h>
#include <sched.h>

#include "halo.h"
#include "ompdpu.h"
#ifdef SUITE_HALO_MPI
#include <mpi.h>
#ifdef SUITE_HAVE_OMPDPU_MPI
#include "ompdpu_mpi.h"
#endif
#endif

/* Device-side buffers of one tile: packed borders in, ghosts out. */
typedef struct dev_tile {
  int dev;
  float *send, *recv; /* device addresses (single-process way) */
} dev_tile;

#ifdef SUITE_HALO_MPI

/* Host processes start (and end) probe samples together. */
#define HALO_SYNC() MPI_Barrier(MPI_COMM_WORLD)

#pragma omp declare target
/* Open MPI's predefined handles (MPI_COMM_WORLD, MPI_FLOAT) are addresses
 * of extern structs of incomplete type, which clang 14 refuses in device
 * code. ompdpu_mpi.h's functions return them (the server defines them for
 * device images); without it, the same handles from MPI functions: Fortran
 * handle 0 is MPI_COMM_WORLD in Open MPI, MPI_Type_match_size gives a
 * 4-byte real. */
static MPI_Comm dpu_world(void) {
#if defined(SUITE_HAVE_OMPDPU_MPI)
  return ompdpu_mpi_comm_world();
#elif defined(OPEN_MPI)
  return MPI_Comm_f2c(0);
#else
  return MPI_COMM_WORLD;
#endif
}

static MPI_Datatype dpu_float(void) {
#if defined(SUITE_HAVE_OMPDPU_MPI)
  return ompdpu_mpi_float();
#else
  MPI_Datatype t;
  MPI_Type_match_size(MPI_TYPECLASS_REAL, (int)sizeof(float), &t);
  return t;
#endif
}

/* The DPU's in-flight exchange, between the two regions. */
static MPI_Request dpu_req[4];
static int dpu_nreq;

/* Posts the exchange among the servers: my borders to the neighbouring
 * servers, theirs into my ghost rows. */
static void dpu_exchange_post(const float *send, float *recv, int nx) {
  MPI_Comm world = dpu_world();
  MPI_Datatype real4 = dpu_float();
  int rank, size, n = 0;
  MPI_Comm_rank(world, &rank);
  MPI_Comm_size(world, &size);
  if (rank > 0) {
    MPI_Irecv(recv, nx, real4, rank - 1, 2, world, &dpu_req[n++]);
    MPI_Isend(send, nx, real4, rank - 1, 1, world, &dpu_req[n++]);
  }
  if (rank + 1 < size) {
    MPI_Irecv(recv + nx, nx, real4, rank + 1, 1, world, &dpu_req[n++]);
    MPI_Isend(send + nx, nx, real4, rank + 1, 2, world, &dpu_req[n++]);
  }
  dpu_nreq = n;
}

static void dpu_exchange_wait(void) {
  MPI_Waitall(dpu_nreq, dpu_req, MPI_STATUSES_IGNORE);
  dpu_nreq = 0;
}
#pragma omp end declare target

/* h->send and h->recv are resident on the DPU (target enter data). */
static void exchange_start(halo_tile *h, int ntiles, dev_tile *d) {
  (void)ntiles;
  float *send = h->send, *recv = h->recv;
  int nx = h->t.nx;
  long n2 = 2L * nx;
#pragma omp target device(d->dev) map(always, to : send[0 : n2])             \
    map(alloc : recv[0 : n2])
  dpu_exchange_post(send, recv, nx);
}

static void exchange_finish(halo_tile *h, int ntiles, dev_tile *d) {
  (void)ntiles;
  float *recv = h->recv;
  long n2 = 2L * h->t.nx;
#pragma omp target device(d->dev) map(always, from : recv[0 : n2])
  dpu_exchange_wait();
}

#else

#define HALO_SYNC() ((void)0)

/* The exchange of all tiles: host -> DPU k, DPU k -> DPU k+-1, DPU ->
 * host. The host's own thread does the short host <-> DPU copies; the
 * device-to-device copies, which wait for two DPUs, run as a task on the
 * team's other thread while this one sweeps. recv rows without a neighbour
 * are never written (global boundary). */
static void copy(void *dst, const void *src, size_t n, size_t dst_off,
                 size_t src_off, int dst_dev, int src_dev) {
  if (omp_target_memcpy(dst, (void *)src, n, dst_off, src_off, dst_dev,
                        src_dev))
    suite_die("omp_target_memcpy (device %d -> %d) failed", src_dev, dst_dev);
}

static void exchange_d2d(halo_tile *h, int ntiles, dev_tile *d) {
  size_t row = sizeof(float) * h[0].t.nx;
  for (int k = 0; k < ntiles; ++k) {
    /* my north border -> north neighbour's south ghost row */
    if (k > 0)
      copy(d[k - 1].recv, d[k].send, row, row, 0, d[k - 1].dev, d[k].dev);
    /* my south border -> south neighbour's north ghost row */
    if (k + 1 < ntiles)
      copy(d[k + 1].recv, d[k].send, row, 0, row, d[k + 1].dev, d[k].dev);
  }
}

static void exchange_start(halo_tile *h, int ntiles, dev_tile *d) {
  int host = omp_get_initial_device();
  size_t two = sizeof(float) * 2 * h[0].t.nx;
  for (int k = 0; k < ntiles; ++k)
    copy(d[k].send, h[k].send, two, 0, 0, d[k].dev, host);
#pragma omp task firstprivate(h, ntiles, d)
  exchange_d2d(h, ntiles, d);
  /* A host with one core: let the other thread start the copies now. */
  if (omp_get_num_procs() < 2)
    sched_yield();
}

static void exchange_finish(halo_tile *h, int ntiles, dev_tile *d) {
  int host = omp_get_initial_device();
  size_t two = sizeof(float) * 2 * h[0].t.nx;
#pragma omp taskwait
  for (int k = 0; k < ntiles; ++k)
    copy(h[k].recv, d[k].recv, two, 0, 0, host, d[k].dev);
}

#endif

/* Timings of one run, seconds per iteration. */
typedef struct halo_times {
  double xchg, comp, iter, waited;
} halo_times;

/* Probes, then the iterations; on the thread that owns the loop. */
static void run_loop(const halo_opts *o, halo_tile *h, int ntiles,
                     dev_tile *d, halo_times *t) {
  /* Probe 1: the sweeps alone (no swap: the grid does not change);
   * medians of single iterations, robust to preemption. */
  double *sample = (double *)suite_alloc(sizeof(double) * (o->probe + 1));
  double t0;
  /* (With several host processes a sample spans two consecutive barrier
   * exits: every process swept once in between.) */
  HALO_SYNC();
  t0 = suite_now();
  for (int i = 0; i < o->probe; ++i) {
    for (int k = 0; k < ntiles; ++k) {
      dnnk_jacobi_inner(&h[k].t, h[k].in, h[k].out);
      dnnk_jacobi_frame(&h[k].t, h[k].in, h[k].out);
    }
    HALO_SYNC();
    double t1 = suite_now();
    sample[i] = t1 - t0;
    t0 = t1;
  }
  t->comp = suite_median(sample, o->probe);
  /* Probe 2: the exchange alone (the ghosts get the values the first
   * iteration gets). */
  for (int i = 0; i < o->probe; ++i) {
    HALO_SYNC();
    t0 = suite_now();
    for (int k = 0; k < ntiles; ++k)
      halo_pack(&h[k]);
    exchange_start(h, ntiles, d);
    exchange_finish(h, ntiles, d);
    for (int k = 0; k < ntiles; ++k)
      halo_unpack(&h[k]);
    sample[i] = suite_now() - t0;
  }
  t->xchg = suite_median(sample, o->probe);
  free(sample);

  double waited = 0;
  for (int i = -o->warmup; i < o->iters; ++i) {
    if (i == 0) {
      HALO_SYNC();
      t0 = suite_now();
      waited = 0;
    }
    double e0 = suite_now();
    for (int k = 0; k < ntiles; ++k)
      halo_pack(&h[k]);
    exchange_start(h, ntiles, d);
    double e1 = suite_now();
    for (int k = 0; k < ntiles; ++k)
      dnnk_jacobi_inner(&h[k].t, h[k].in, h[k].out);
    double e2 = suite_now();
    exchange_finish(h, ntiles, d);
    for (int k = 0; k < ntiles; ++k)
      halo_unpack(&h[k]);
    waited += (e1 - e0) + (suite_now() - e2);
    for (int k = 0; k < ntiles; ++k) {
      dnnk_jacobi_frame(&h[k].t, h[k].in, h[k].out);
      halo_swap(&h[k]);
    }
  }
  HALO_SYNC();
  t->iter = (suite_now() - t0) / o->iters;
  t->waited = waited / o->iters;
}

int main(int argc, char **argv) {
  halo_opts o = halo_parse(argc, argv);
  int first = 0, ntiles = o.ranks;
#ifdef SUITE_HALO_MPI
  int provided, hrank, hsize;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &hrank);
  MPI_Comm_size(MPI_COMM_WORLD, &hsize);
  if (hsize != o.ranks)
    suite_die("halo offload-mpi: %d host processes expected, got %d",
              o.ranks, hsize);
  first = hrank;
  ntiles = 1;
#endif
  halo_tile *h = (halo_tile *)suite_alloc(sizeof(halo_tile) * ntiles);
  dev_tile *d = (dev_tile *)suite_alloc(sizeof(dev_tile) * ntiles);
  if (ompdpu_num_devices() < ntiles)
    suite_die("halo offload: %d DPUs needed, %d present", ntiles,
              ompdpu_num_devices());
  for (int k = 0; k < ntiles; ++k) {
    halo_tile_init(&h[k], &o, first + k);
    d[k].dev = ompdpu_device(k);
    int on_host = 1;
#pragma omp target device(d[k].dev) map(from : on_host)
    on_host = omp_is_initial_device();
    if (on_host)
      suite_die("target region ran on the host");
    long n2 = 2L * o.nx;
#ifdef SUITE_HALO_MPI
    float *send = h[k].send, *recv = h[k].recv;
#pragma omp target enter data device(d[k].dev)                                \
    map(alloc : send[0 : n2], recv[0 : n2])
#else
    size_t two = sizeof(float) * n2;
    d[k].send = (float *)omp_target_alloc(two, d[k].dev);
    d[k].recv = (float *)omp_target_alloc(two, d[k].dev);
    if (!d[k].send || !d[k].recv)
      suite_die("omp_target_alloc on DPU %d failed", k);
#endif
  }

  halo_times t;
#ifdef SUITE_HALO_MPI
  run_loop(&o, h, ntiles, d, &t);
#else
  /* Nested parallelism stays available to the sweeps. */
  omp_set_max_active_levels(2);
#pragma omp parallel num_threads(2)
#pragma omp single
  run_loop(&o, h, ntiles, d, &t);
#endif

  uint64_t hash = SUITE_FNV_INIT;
#ifdef SUITE_HALO_MPI
  if (hrank == 0) {
    hash = halo_hash_rows(hash, &h[0]);
    for (int r = 1; r < hsize; ++r) {
      halo_tile other;
      halo_tile_init(&other, &o, r);
      MPI_Recv(other.in, (int)dnnk_tile_size(&other.t), MPI_FLOAT, r, 9,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      hash = halo_hash_rows(hash, &other);
    }
    halo_report("offload-mpi", &o, t.iter, t.comp, t.xchg, t.waited, hash);
  } else {
    MPI_Send(h[0].in, (int)dnnk_tile_size(&h[0].t), MPI_FLOAT, 0, 9,
             MPI_COMM_WORLD);
  }
  float *send = h[0].send, *recv = h[0].recv;
  long n2 = 2L * o.nx;
#pragma omp target exit data device(d[0].dev)                                 \
    map(delete : send[0 : n2], recv[0 : n2])
  MPI_Finalize();
#else
  for (int k = 0; k < ntiles; ++k)
    hash = halo_hash_rows(hash, &h[k]);
  halo_report("offload", &o, t.iter, t.comp, t.xchg, t.waited, hash);
  for (int k = 0; k < ntiles; ++k) {
    omp_target_free(d[k].send, d[k].dev);
    omp_target_free(d[k].recv, d[k].dev);
  }
#endif
  return 0;
}
