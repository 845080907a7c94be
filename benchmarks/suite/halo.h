/* Workload 2, halo exchange: a 2D Jacobi stencil over an NY x NX grid
 * split by rows across K host ranks (tile k holds rows [k NY/K, (k+1) NY/K)
 * with one ghost row or column on each side). The outer ring of the global
 * grid is a fixed boundary (top edge 1, the others 0); neighbouring tiles
 * exchange their border rows every iteration. An iteration:
 *
 *   1. start the exchange of the border rows (how: the three ways differ)
 *   2. sweep the points that read no ghost (dnnk_jacobi_inner)
 *   3. finish the exchange, unpack the ghost rows
 *   4. sweep the one-point frame (dnnk_jacobi_frame), swap the buffers
 *
 * Every way does the same arithmetic on the host, so the grids after N
 * iterations are bit-identical; the checksum is over the global interior in
 * row order. Timed: the iterations (mean), and in them the time host rank
 * 0 spends starting the exchange (pack, post) and finishing it (wait,
 * unpack). Before the iterations, in the same processes, the exchange alone
 * and the sweeps alone are timed (medians of single iterations, all host
 * ranks together), so the overlap achieved is
 *   1 - (t_iteration - t_sweeps) / t_exchange      (clamped to [0, 1]),
 * the share of the exchange hidden behind the sweeps. With several host
 * ranks on one core, a rank's wait also covers the other ranks' sweeps, so
 * the waited time is only comparable between single-process ways. */
#ifndef SUITE_HALO_H
#define SUITE_HALO_H

#include "common.h"

typedef struct halo_opts {
  int ny, nx, ranks, iters, warmup, probe;
} halo_opts;

static inline halo_opts halo_parse(int argc, char **argv) {
  halo_opts o;
  o.ny = (int)suite_opt_int(argc, argv, "--ny", 2048);
  o.nx = (int)suite_opt_int(argc, argv, "--nx", 2048);
  o.ranks = (int)suite_opt_int(argc, argv, "--ranks", 2);
  o.iters = (int)suite_opt_int(argc, argv, "--iters", 50);
  o.warmup = (int)suite_opt_int(argc, argv, "--warmup", 3);
  o.probe = (int)suite_opt_int(argc, argv, "--probe", 10);
  if (o.ranks < 1 || o.ny < 3 * o.ranks || o.nx < 3)
    suite_die("halo: grid too small for %d ranks", o.ranks);
  return o;
}

/* The tile of rank r: rows [y0, y0 + ny) of the global interior. */
typedef struct halo_tile {
  dnnk_tile t;
  int y0;
  int rank, ranks;
  float *in, *out;     /* current and next iterate, with ghosts */
  float *send, *recv;  /* packed borders: north | south (nx each) */
} halo_tile;

static inline void halo_tile_init(halo_tile *h, const halo_opts *o, int r) {
  int y0 = (int)((long)o->ny * r / o->ranks);
  int y1 = (int)((long)o->ny * (r + 1) / o->ranks);
  h->t.ny = y1 - y0;
  h->t.nx = o->nx;
  h->t.halo = 1;
  h->y0 = y0;
  h->rank = r;
  h->ranks = o->ranks;
  long size = dnnk_tile_size(&h->t);
  int ld = dnnk_tile_ld(&h->t);
  h->in = (float *)suite_alloc(sizeof(float) * size);
  h->out = (float *)suite_alloc(sizeof(float) * size);
  h->send = (float *)suite_alloc(sizeof(float) * 2 * o->nx);
  h->recv = (float *)suite_alloc(sizeof(float) * 2 * o->nx);
  /* Interior from a per-row LCG (independent of the split), boundary
   * fixed: top edge 1, other edges 0; inner ghost rows 0 until exchanged. */
  memset(h->in, 0, sizeof(float) * size);
  for (int y = 0; y < h->t.ny; ++y)
    suite_fill(h->in + (long)(y + 1) * ld + 1, o->nx,
               1000u + (uint32_t)(y0 + y), 1.0f);
  if (r == 0)
    for (int x = 0; x < ld; ++x)
      h->in[x] = 1.0f;
  memcpy(h->out, h->in, sizeof(float) * size);
  memset(h->recv, 0, sizeof(float) * 2 * o->nx);
}

/* Neighbours (rank or -1). */
static inline int halo_north(const halo_tile *h) { return h->rank - 1; }
static inline int halo_south(const halo_tile *h) {
  return h->rank + 1 < h->ranks ? h->rank + 1 : -1;
}

/* Packs the border rows of the current iterate into send. */
static inline void halo_pack(halo_tile *h) {
  dnnk_halo_pack(&h->t, h->in, DNNK_NORTH, 0, h->send);
  dnnk_halo_pack(&h->t, h->in, DNNK_SOUTH, 0, h->send + h->t.nx);
}

/* Unpacks received ghost rows (only where there is a neighbour: the global
 * boundary rows stay fixed). */
static inline void halo_unpack(halo_tile *h) {
  if (halo_north(h) >= 0)
    dnnk_halo_unpack(&h->t, h->in, DNNK_NORTH, 0, h->recv);
  if (halo_south(h) >= 0)
    dnnk_halo_unpack(&h->t, h->in, DNNK_SOUTH, 0, h->recv + h->t.nx);
}

static inline void halo_swap(halo_tile *h) {
  float *t = h->in;
  h->in = h->out;
  h->out = t;
}

/* Checksum of the interior rows of tiles given in rank order. */
static inline uint64_t halo_hash_rows(uint64_t h, const halo_tile *t) {
  int ld = dnnk_tile_ld(&t->t);
  for (int y = 0; y < t->t.ny; ++y)
    h = suite_hash_words(h, t->in + (long)(y + 1) * ld + 1,
                         sizeof(float) * t->t.nx);
  return h;
}

/* The record of one run. t_* are seconds per iteration. */
static inline void halo_report(const char *way, const halo_opts *o,
                               double t_iter, double t_comp, double t_xchg,
                               double waited, uint64_t hash) {
  double exposed = t_iter - t_comp;
  double overlap = t_xchg > 0 ? 1.0 - exposed / t_xchg : 1.0;
  if (overlap < 0)
    overlap = 0;
  if (overlap > 1)
    overlap = 1;
  suite_result_begin("halo", way);
  suite_result_num("ny", o->ny);
  suite_result_num("nx", o->nx);
  suite_result_num("ranks", o->ranks);
  suite_result_num("iters", o->iters);
  suite_result_num("ms_per_iter", 1e3 * t_iter);
  suite_result_num("compute_ms_per_iter", 1e3 * t_comp);
  suite_result_num("exchange_ms_per_iter", 1e3 * t_xchg);
  suite_result_num("exposed_ms_per_iter", 1e3 * exposed);
  suite_result_num("waited_ms_per_iter", 1e3 * waited);
  suite_result_num("overlap", overlap);
  suite_result_hash("grid_hash", hash);
  suite_result_end();
}

#endif /* SUITE_HALO_H */
