/* The wide product over padded images: each thread copies one image at a
 * time into zero-padded planes, one per channel and stride phase (space to
 * depth: phase (py, px) holds source rows py + sy k and columns px + sx k),
 * so every B row is one contiguous stream through a plane with unit steps,
 * read in place by the micro-kernel (no packing, no bounds, no runs), at
 * the price of the few extra columns the padding adds to each grid row,
 * which the store skips. Threads own whole images, so a batch of
 * small images keeps all of them busy and nothing is shared but the
 * weights. */
#include <stdint.h>

#include "convgemm.h"
#include "omp_compat.h"

#pragma omp declare target

/* Larger of two longs. */
static inline long max_l(long a, long b) { return a > b ? a : b; }

/* floor(a / s) for s > 0. */
static inline int floor_div(int a, int s) {
  return a >= 0 ? a / s : -((-a + s - 1) / s);
}

/* Phase planes of one axis: tap t reads phase t - s floor(t / s) at shift
 * floor(t / s); a plane has before zero rows, then the phase's source rows,
 * len in all (the grid reaches grid - 1 + the largest shift). Along rows
 * (wrap), reads past a row's end land in the next row's leading zeros, so
 * the two sides share one padding gap (16 columns, pad 1: rows of 17, not
 * 18). */
static void axis_plan(cg_taps t, int size, int grid, int s, int wrap,
                      int *before, int *len) {
  int last = t.off0 + (t.n - 1) * t.doff;
  int a = floor_div(t.off0, s), b = floor_div(last, s);
  int lo = a < b ? a : b, hi = a > b ? a : b;
  long src = (size + s - 1) / s;
  *before = lo < 0 ? -lo : 0;
  if (wrap) /* and at least the grid: it is the wide row's length too */
    *len = (int)max_l(max_l(*before + src, (long)grid + hi), grid);
  else
    *len = (int)(*before + max_l(src, (long)grid + hi));
}

/* Numbers the phases of one axis its taps read (-1: unused, no plane);
 * returns how many, or 0 when the step exceeds the table. */
static int axis_phases(cg_taps t, int s, int *idx) {
  if (s > DNNK_CG_MAX_STEP)
    return 0;
  for (int p = 0; p < s; ++p)
    idx[p] = -1;
  for (int a = 0; a < t.n; ++a) {
    int v = t.off0 + a * t.doff;
    idx[v - floor_div(v, s) * s] = 0;
  }
  int n = 0;
  for (int p = 0; p < s; ++p)
    if (idx[p] == 0)
      idx[p] = n++;
  return n;
}

cg_flat cg_flat_plan(const cg_gather *g) {
  cg_flat f;
  axis_plan(g->ty, g->t.h, g->gu, g->sy, 0, &f.pt, &f.hp);
  axis_plan(g->tx, g->t.w, g->gv, g->sx, 1, &f.pl, &f.wp);
  f.gw = f.wp;
  f.plane = (long)f.hp * f.wp;
  f.nph_y = axis_phases(g->ty, g->sy, f.ph_y);
  f.nph_x = axis_phases(g->tx, g->sx, f.ph_x);
  f.planes = g->nch * f.nph_y * f.nph_x;
  /* The extra columns of the last row read past the plane: slack. */
  f.image = f.planes * f.plane + 2 * f.wp + DNNK_NR + 16;
  f.cols = (long)g->gu * f.gw;
  f.kc = DNNK_CG_KC_INPLACE;
  f.nb = (int)min_l(round_up(f.cols, DNNK_NR), 8 * DNNK_CG_NB);
  f.ok = f.nph_y > 0 && f.nph_x > 0 && f.image <= 2 * DNNK_CG_BLOCK;
  return f;
}

size_t cg_flat_slot(const cg_gather *g, const cg_flat *f) {
  (void)g;
  size_t segs = (sizeof(cg_seg) * (f->nb + 1) + 3) / 4;
  size_t firsts = (sizeof(int) * (f->nb / DNNK_NR + 2) + 3) / 4;
  return (size_t)f->image + segs + firsts + DNNK_MR * DNNK_NR + 6 * 16;
}

void cg_flat_offsets(const cg_gather *g, const cg_flat *f, long *roff) {
  for (int r = 0; r < cg_rows(g); ++r) {
    int ch, a, b;
    cg_row(g, r, &ch, &a, &b);
    int ty = g->ty.off0 + a * g->ty.doff, tx = g->tx.off0 + b * g->tx.doff;
    int sy = floor_div(ty, g->sy), sx = floor_div(tx, g->sx);
    int py = ty - sy * g->sy, px = tx - sx * g->sx;
    long plane = ((long)ch * f->nph_y + f->ph_y[py]) * f->nph_x + f->ph_x[px];
    roff[r] = plane * f->plane + (long)(f->pt + sy) * f->wp + f->pl + sx;
  }
}

/* One padded phase plane: source rows py + sy k, columns px + sx k. */
CG_NO_CALLS static void pad_plane(const cg_gather *g, const cg_flat *f,
                                  const float *src, int py, int px, float *d) {
  long xs = g->sx * g->t.xs;
  int x0 = f->pl, x1 = f->pl + (g->t.w - px + g->sx - 1) / g->sx;
  for (int y = 0; y < f->hp; ++y, d += f->wp) {
    int k = y - f->pt, sy = py + g->sy * k;
    if (k < 0 || sy >= g->t.h) {
      zero_short(d, f->wp);
      continue;
    }
    const float *s = src + sy * g->t.ys + px * g->t.xs;
    zero_short(d, x0);
    if (xs == 1) {
      copy_short(d + x0, s, x1 - x0);
    } else if (xs == 2) {
      copy_stride2(d + x0, s, x1 - x0, 2L * (x1 - x0) - 1);
    } else {
      for (int x = x0; x < x1; ++x)
        d[x] = s[(x - x0) * xs];
    }
    zero_short(d + x1, f->wp - x1);
  }
}

/* Whether image b can be read where it is: one phase per axis, no padding
 * needed, dense NCHW planes, and the reads past its last plane (extra
 * columns, vector overshoot) still inside the tensor. */
static int in_place(const cg_gather *g, const cg_flat *f, int b) {
  const cg_tensor *t = &g->t;
  return f->planes == g->nch && f->pt == 0 && f->pl == 0 && f->wp == t->w &&
         f->hp == t->h && t->xs == 1 && t->ys == t->w &&
         t->cs == (long)t->h * t->w && t->bs == g->nch * t->cs &&
         b * t->bs + f->image <= g->n * t->bs;
}

const float *cg_image(const cg_gather *g, const cg_flat *f, int b, float *buf) {
  if (in_place(g, f, b))
    return g->src + b * g->t.bs;
  cg_pad_image(g, f, b, buf);
  return buf;
}

void cg_pad_image(const cg_gather *g, const cg_flat *f, int b, float *p) {
  const float *src = g->src + b * g->t.bs;
  for (int ch = 0; ch < g->nch; ++ch)
    for (int py = 0; py < g->sy; ++py)
      for (int px = 0; px < g->sx; ++px) {
        if (f->ph_y[py] < 0 || f->ph_x[px] < 0)
          continue;
        long k = ((long)ch * f->nph_y + f->ph_y[py]) * f->nph_x + f->ph_x[px];
        pad_plane(g, f, src + ch * g->t.cs, py, px, p + k * f->plane);
      }
  long tail = f->image - f->planes * f->plane;
  for (long i = 0; i < tail; ++i)
    p[f->planes * f->plane + i] = 0.0f;
}

/* Store segments of wide columns [q0, q0 + cols) of image b: per sliver,
 * runs of valid columns one output step (tx * xs) apart, one per grid-row
 * piece (merged when rows continue each other); first[s] indexes them. */
static void segments(const cg_gather *g, const cg_flat *f, const cg_scatter *o,
                     int b, long q0, int cols, cg_seg *seg, int *first) {
  long step = o->tx * o->t.xs;
  int n = 0, ns = (cols + DNNK_NR - 1) / DNNK_NR;
  for (int s = 0; s < ns; ++s) {
    first[s] = n;
    int j0 = s * DNNK_NR, j1 = (int)min_l(cols, j0 + DNNK_NR);
    for (int j = j0; j < j1;) {
      long q = q0 + j;
      int u = (int)(q / f->gw), v = (int)(q % f->gw);
      int take = (int)min_l(f->gw - v, j1 - j);
      int valid = (int)min_l(g->gv - v, take);
      if (valid > 0) {
        long off = b * o->t.bs + (long)(u * o->ty + o->oy) * o->t.ys +
                   (long)(v * o->tx + o->ox) * o->t.xs;
        cg_seg *last = n > first[s] ? &seg[n - 1] : NULL;
        if (last && last->lane + last->len == j - j0 &&
            last->dst + last->len * step == off) {
          last->len += valid;
        } else {
          cg_seg sg = {j - j0, valid, off};
          seg[n++] = sg;
        }
      }
      j += take;
    }
  }
  first[ns] = n;
}

/* Stores one tile's rows through the sliver's segments. */
static void store_segs(const float *acc, const cg_scatter *o, const cg_seg *seg,
                       int nseg, int m0, int mr, int first, const float *bias) {
  long step = o->tx * o->t.xs;
  if (step != 1) {
    for (int i = 0; i < mr; ++i) {
      const float *a = acc + i * DNNK_NR;
      float add = bias ? bias[m0 + i] : 0.0f;
      float *row = o->dst + (m0 + i) * o->t.cs;
      for (int k = 0; k < nseg; ++k) {
        float *d = row + seg[k].dst;
        const float *s = a + seg[k].lane;
        for (int j = 0; j < seg[k].len; ++j)
          d[j * step] = first ? s[j] + add : d[j * step] + s[j] + add;
      }
    }
    return;
  }
  for (int i = 0; i < mr; ++i) {
    const float *a = acc + i * DNNK_NR;
    float add = bias ? bias[m0 + i] : 0.0f;
    float *row = o->dst + (m0 + i) * o->t.cs;
    for (int k = 0; k < nseg; ++k)
      store_short(row + seg[k].dst, a + seg[k].lane, add, seg[k].len, first);
  }
}

/* One image through the wide product, in one thread's slot. */
/* The product of one image already in padded planes (img), with scratch
 * for the store segments and the tile. */
static void image_product(const cg_gather *g, const cg_flat *f, int m,
                          const cg_scatter *out, const float *bias,
                          const float *ap, const long *roff, const float *img,
                          float *scratch, int b) {
  int rows = cg_rows(g), mr = cg_tile_rows(m);
  int ns = (rows + f->kc - 1) / f->kc;
  long mpad = round_up(m, mr);
  cg_seg *seg = (cg_seg *)align64(scratch);
  int *first = (int *)align64((float *)(seg + f->nb + 1));
  float *acc = align64((float *)(first + f->nb / DNNK_NR + 2));
  for (long q0 = 0; q0 < f->cols; q0 += f->nb) {
    int cols = (int)min_l(f->nb, f->cols - q0);
    segments(g, f, out, b, q0, cols, seg, first);
    for (int sl = 0; sl < ns; ++sl) {
      int r0 = (int)((long)rows * sl / ns);
      int kc = (int)((long)rows * (sl + 1) / ns) - r0;
      const float *as = ap + mpad * r0;
      const float *b_last = r0 + kc == rows ? bias : NULL;
      for (int j0 = 0; j0 < cols; j0 += DNNK_NR) {
        int s = j0 / DNNK_NR;
        if (first[s + 1] == first[s])
          continue;
        for (int m0 = 0; m0 < m; m0 += mr) {
          cg_micro_rows(mr, kc, as + (long)m0 * kc, img + q0 + j0, roff + r0,
                        acc);
          store_segs(acc, out, seg + first[s], first[s + 1] - first[s], m0,
                     (int)min_l(mr, m - m0), sl == 0, b_last);
        }
      }
    }
  }
}

/* One image through the wide product, in one thread's slot. */
static void flat_image(const cg_gather *g, const cg_flat *f, int m,
                       const cg_scatter *out, const float *bias,
                       const float *ap, const long *roff, float *slot, int b) {
  float *buf = align64(slot);
  const float *img = cg_image(g, f, b, buf);
  image_product(g, f, m, out, bias, ap, roff, img, buf + f->image + 16, b);
}

int cg_flat_common(const cg_gather *gs, int np, cg_flat *fs, cg_flat *fc) {
  for (int p = 0; p < np; ++p) {
    fs[p] = cg_flat_plan(&gs[p]);
    if (!fs[p].ok || gs[p].sy != 1 || gs[p].sx != 1)
      return 0;
  }
  cg_flat c = fs[0];
  for (int p = 1; p < np; ++p) {
    c.pt = c.pt > fs[p].pt ? c.pt : fs[p].pt;
    c.pl = c.pl > fs[p].pl ? c.pl : fs[p].pl;
  }
  /* Each phase's rows and row length, moved to the common padding. */
  c.hp = gs[0].t.h + c.pt;
  c.wp = gs[0].t.w + c.pl;
  for (int p = 0; p < np; ++p) {
    c.hp = (int)max_l(c.hp, fs[p].hp - fs[p].pt + c.pt);
    c.wp = (int)max_l(c.wp, fs[p].wp);
  }
  c.gw = c.wp;
  c.plane = (long)c.hp * c.wp;
  c.image = c.planes * c.plane + 2 * c.wp + DNNK_NR + 16;
  if (c.image > 2 * DNNK_CG_BLOCK)
    return 0;
  c.nb = 0;
  for (int p = 0; p < np; ++p) {
    cg_flat f = c;
    f.cols = (long)gs[p].gu * c.gw;
    f.nb = (int)min_l(round_up(f.cols, DNNK_NR), 8 * DNNK_CG_NB);
    c.nb = f.nb > c.nb ? f.nb : c.nb;
    fs[p] = f;
  }
  *fc = c;
  return 1;
}

void cg_phases_run(const cg_gather *gs, const cg_scatter *ss, int np,
                   const cg_flat *fs, const cg_flat *fc, int m,
                   const float *const *ap, const long *const *roff,
                   float *slots, size_t slot, int threads) {
#pragma omp parallel num_threads(threads)
  {
    float *buf = align64(slots + slot * omp_get_thread_num());
#pragma omp for schedule(static)
    for (int b = 0; b < gs[0].n; ++b) {
      /* dy once for every phase: they read the same planes. */
      const float *img = cg_image(&gs[0], fc, b, buf);
      for (int p = 0; p < np; ++p)
        image_product(&gs[p], &fs[p], m, &ss[p], NULL, ap[p], roff[p], img,
                      buf + fc->image + 16, b);
    }
  }
}

void cg_flat_run(const cg_gather *g, const cg_flat *f, int m,
                 const cg_scatter *out, const float *bias, const float *ap,
                 const long *roff, float *slots, size_t slot, int threads) {
#pragma omp parallel num_threads(threads)
  {
    float *mine = slots + slot * omp_get_thread_num();
#pragma omp for schedule(static)
    for (int b = 0; b < g->n; ++b)
      flat_image(g, f, m, out, bias, ap, roff, mine, b);
  }
}

#pragma omp end declare target
