/* Packing of convGemm's B operand straight from a tensor: the im2col
 * transform done sliver by sliver inside the GEMM, so the column matrix
 * never exists. Each row of B is a (channel, tap) pair; columns come in
 * runs along one grid row, whose in-image part is a (strided) copy and
 * whose rest is padding. */
#include "convgemm.h"

#pragma omp declare target

/* First grid index o with o * s + off >= 0. */
static inline int first_in(int off, int s) {
  return off >= 0 ? 0 : (-off + s - 1) / s;
}

/* One past the last grid index o < out with o * s + off < size. */
static inline int end_in(int off, int s, int size, int out) {
  if (size - off <= 0)
    return 0;
  long e = (size - off + s - 1) / s;
  return (int)min_l(out, e);
}

int cg_make_runs(const cg_gather *g, long p0, int count, int split, int kc,
                 cg_run *runs) {
  long per_img = (long)g->gu * g->gv, total = cg_cols(g);
  int n = 0;
  for (int c = 0; c < count;) {
    long p = p0 + c;
    int lane = c % split, sl = c / split;
    int room = (int)min_l(split - lane, count - c);
    cg_run r = {-1, 0, 0, room, sl * kc * split + lane, 0};
    if (p < total) {
      long rem = p % per_img;
      r.b = (int)(p / per_img);
      r.u = (int)(rem / g->gv);
      r.v0 = (int)(rem % g->gv);
      r.len = (int)min_l(min_l(room, g->gv - r.v0), total - p);
      r.base = r.b * g->t.bs + (long)r.u * g->sy * g->t.ys +
               (long)r.v0 * g->sx * g->t.xs;
    }
    runs[n++] = r;
    c += r.len;
  }
  return n;
}

void cg_row_geoms(const cg_gather *g, cg_geom *out) {
  for (int r = 0; r < cg_rows(g); ++r) {
    int ch, a, b;
    cg_row(g, r, &ch, &a, &b);
    int uy = g->ty.off0 + a * g->ty.doff, tx = g->tx.off0 + b * g->tx.doff;
    cg_geom *o = &out[r];
    o->off = ch * g->t.cs + (long)uy * g->t.ys + (long)tx * g->t.xs;
    o->u0 = first_in(uy, g->sy);
    o->u1 = end_in(uy, g->sy, g->t.h, g->gu);
    o->v0 = first_in(tx, g->sx);
    o->v1 = end_in(tx, g->sx, g->t.w, g->gv);
  }
}

/* Writes one run of row o into d, consecutive elements step apart. */
CG_NO_CALLS static inline __attribute__((always_inline)) void
gather_run(const cg_gather *g, const cg_geom *o, const cg_run *run, float *d,
           long step) {
  int len = run->len;
  if (run->b < 0 || run->u < o->u0 || run->u >= o->u1) {
    if (step == 1)
      zero_short(d, len);
    else
      for (int i = 0; i < len; ++i)
        d[i * step] = 0.0f;
    return;
  }
  int lo = o->v0 - run->v0, hi = o->v1 - run->v0;
  lo = lo < 0 ? 0 : lo > len ? len : lo;
  hi = hi < lo ? lo : hi > len ? len : hi;
  long xs = g->sx * g->t.xs;
  const float *s = g->src + run->base + o->off;
  if (step == 1 && xs == 1) {
    zero_short(d, lo);
    copy_short(d + lo, s + lo, hi - lo);
    zero_short(d + hi, len - hi);
    return;
  }
  for (int i = 0; i < lo; ++i)
    d[i * step] = 0.0f;
  for (int i = lo; i < hi; ++i)
    d[i * step] = s[i * xs];
  for (int i = hi; i < len; ++i)
    d[i * step] = 0.0f;
}

CG_NO_CALLS void cg_pack_b(const cg_gather *g, const cg_geom *geo, int r0,
                           int kc, const cg_run *runs, int nruns, float *dst) {
  for (int r = r0; r < r0 + kc; ++r) {
    float *row = dst + (long)(r - r0) * DNNK_NR;
    for (int k = 0; k < nruns; ++k)
      gather_run(g, &geo[r], &runs[k], row + runs[k].pos, 1);
  }
}

CG_NO_CALLS void cg_pack_bt(const cg_gather *g, const cg_geom *geo, int r0,
                            int r1, int kc, const cg_run *runs, int nruns,
                            float *dst) {
  int rows = cg_rows(g), end = r1 < rows ? r1 : rows;
  for (int r = r0; r < end; ++r) {
    float *col = dst + (long)((r - r0) / DNNK_NR) * kc * DNNK_NR + r % DNNK_NR;
    for (int k = 0; k < nruns; ++k)
      gather_run(g, &geo[r], &runs[k], col + (long)runs[k].pos * DNNK_NR,
                 DNNK_NR);
  }
  /* Lanes of the last sliver beyond R read as zero. */
  for (int r = end; r < r1; ++r) {
    float *col = dst + (long)((r - r0) / DNNK_NR) * kc * DNNK_NR + r % DNNK_NR;
    for (int p = 0; p < kc; ++p)
      col[(long)p * DNNK_NR] = 0.0f;
  }
}

#pragma omp end declare target
