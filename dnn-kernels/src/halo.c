/* Packing and unpacking of the ghost borders of a 2D tile, so that an
 * application can exchange them (MPI, offload copies) while the interior is
 * being computed. Strips are packed row by row: a north/south strip is
 * halo rows of nx (or nx + 2 halo with corners) contiguous values, a
 * west/east strip is ny rows of halo values. */
#include <string.h>

#include "dnnk.h"

#pragma omp declare target

int dnnk_tile_ld(const dnnk_tile *t) { return t->nx + 2 * t->halo; }

long dnnk_tile_size(const dnnk_tile *t) {
  return (long)(t->ny + 2 * t->halo) * dnnk_tile_ld(t);
}

long dnnk_halo_count(const dnnk_tile *t, int side, int corners) {
  if (side == DNNK_NORTH || side == DNNK_SOUTH)
    return (long)t->halo * (corners ? dnnk_tile_ld(t) : t->nx);
  return (long)t->halo * t->ny;
}

/* Geometry of a strip in storage coordinates: first row, first column,
 * rows and columns. */
typedef struct strip {
  int row, col, rows, cols;
} strip;

/* The strip of one side; inner selects the interior points sent to the
 * neighbour, otherwise the ghost points received from it. */
static strip side_strip(const dnnk_tile *t, int side, int corners, int inner) {
  int w = t->halo;
  strip s;
  if (side == DNNK_NORTH || side == DNNK_SOUTH) {
    s.rows = w;
    s.col = corners ? 0 : w;
    s.cols = corners ? dnnk_tile_ld(t) : t->nx;
    if (side == DNNK_NORTH)
      s.row = inner ? w : 0;
    else
      s.row = inner ? t->ny : t->ny + w;
  } else {
    s.rows = t->ny;
    s.row = w;
    s.cols = w;
    if (side == DNNK_WEST)
      s.col = inner ? w : 0;
    else
      s.col = inner ? t->nx : t->nx + w;
  }
  return s;
}

/* Strips below this size are copied by the calling thread alone. */
#define DNNK_HALO_PARALLEL 65536L

void dnnk_halo_pack(const dnnk_tile *t, const float *grid, int side,
                    int corners, float *buf) {
  strip s = side_strip(t, side, corners, 1);
  int ld = dnnk_tile_ld(t);
#pragma omp parallel for schedule(static) if ((long)s.rows * s.cols >          \
                                              DNNK_HALO_PARALLEL)
  for (int r = 0; r < s.rows; ++r)
    memcpy(buf + (long)r * s.cols, grid + (long)(s.row + r) * ld + s.col,
           sizeof(float) * s.cols);
}

void dnnk_halo_unpack(const dnnk_tile *t, float *grid, int side, int corners,
                      const float *buf) {
  strip s = side_strip(t, side, corners, 0);
  int ld = dnnk_tile_ld(t);
#pragma omp parallel for schedule(static) if ((long)s.rows * s.cols >          \
                                              DNNK_HALO_PARALLEL)
  for (int r = 0; r < s.rows; ++r)
    memcpy(grid + (long)(s.row + r) * ld + s.col, buf + (long)r * s.cols,
           sizeof(float) * s.cols);
}

#pragma omp end declare target
