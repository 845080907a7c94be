/* 5-point Jacobi sweeps over parts of a tile, split so that the points that
 * need no ghost value (inner) can run during the halo exchange and only the
 * one-point frame waits for it. */
#include "dnnk.h"

#pragma omp declare target

/* Points below which a sweep runs on the calling thread alone. */
#define DNNK_JACOBI_PARALLEL 16384L

void dnnk_jacobi_region(const dnnk_tile *t, const float *in, float *out, int y0,
                        int y1, int x0, int x1) {
  if (y1 <= y0 || x1 <= x0)
    return;
  int ld = dnnk_tile_ld(t), w = t->halo;
#pragma omp parallel for schedule(static) if ((long)(y1 - y0) * (x1 - x0) >    \
                                              DNNK_JACOBI_PARALLEL)
  for (int y = y0; y < y1; ++y) {
    const float *c = in + (long)(y + w) * ld + w;
    const float *n = c - ld, *s = c + ld;
    float *o = out + (long)(y + w) * ld + w;
#pragma omp simd
    for (int x = x0; x < x1; ++x)
      o[x] = 0.25f * ((n[x] + s[x]) + (c[x - 1] + c[x + 1]));
  }
}

void dnnk_jacobi_inner(const dnnk_tile *t, const float *in, float *out) {
  dnnk_jacobi_region(t, in, out, 1, t->ny - 1, 1, t->nx - 1);
}

void dnnk_jacobi_frame(const dnnk_tile *t, const float *in, float *out) {
  int ny = t->ny, nx = t->nx;
  dnnk_jacobi_region(t, in, out, 0, 1, 0, nx); /* top row */
  if (ny > 1)
    dnnk_jacobi_region(t, in, out, ny - 1, ny, 0, nx); /* bottom row */
  if (ny > 2) {
    dnnk_jacobi_region(t, in, out, 1, ny - 1, 0, 1); /* left column */
    if (nx > 1)
      dnnk_jacobi_region(t, in, out, 1, ny - 1, nx - 1, nx); /* right */
  }
}

#pragma omp end declare target
