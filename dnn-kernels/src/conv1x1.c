/* Pointwise strided convolutions on NCHW: each output point reads one input
 * point per channel, so every pass is a small product per image:
 *   forward:          Y (k x P) = W (k x c) * X_s, X_s x's strided points;
 *   backward data:    T (c x P) = W^T * dY, written to dx's strided points
 *                     with the zeros between them (each point once);
 *   backward weights: dW (k x c) = sum over images of dY * X_s^T, the
 *                     points gathered transposed, outer-product tiles.
 * Work items are (image, block of output rows); one parallel region per
 * pass, threads taking items statically, with no barrier but the final
 * reduction of the weights' gradient. */
#include <stdlib.h>

#include "conv1x1.h"
#include "convgemm.h"
#include "omp_compat.h"

#pragma omp declare target

/* Rows of an outer-product tile (one broadcast each per depth step). */
#define PW_MR DNNK_MR
/* Columns of an outer-product tile: two vectors. */
#define PW_NW (2 * DNNK_VLEN)
/* Depth of a product slice, and the channels gathered at a time. */
#define PW_DEPTH 256
/* Rows of the data gradient's product per pass over dy (a multiple of MR). */
#define PW_CT (PW_MR * 32)
/* Output points per work item (whole output rows, at least one). */
#define PW_COLS 256

/* The output grid and its work items. */
typedef struct pw_geom {
  int oh, ow;   /* output plane */
  int rows_per; /* output rows per item */
  int chunks;   /* items per image */
  long items;   /* items in all */
  long cmax;    /* most columns of an item */
} pw_geom;

/* The grid of layer d. */
static pw_geom geom(const dnnk_conv_desc *d) {
  pw_geom g;
  g.oh = dnnk_conv_out_h(d);
  g.ow = dnnk_conv_out_w(d);
  g.rows_per = g.ow >= PW_COLS ? 1 : PW_COLS / g.ow;
  if (g.rows_per > g.oh)
    g.rows_per = g.oh;
  g.chunks = (g.oh + g.rows_per - 1) / g.rows_per;
  g.items = (long)d->n * g.chunks;
  g.cmax = (long)g.rows_per * g.ow;
  return g;
}

int pw_applies(const dnnk_conv_desc *d, int layout) {
  return layout == DNNK_NCHW && d->kh == 1 && d->kw == 1 && d->pad_h == 0 &&
         d->pad_w == 0 && (d->stride_h > 1 || d->stride_w > 1);
}

/* Floats of an edge tile's padded copies (depth x NW of B, MR x NW of C). */
static long edge_floats(void) { return (long)PW_DEPTH * PW_NW + PW_MR * PW_NW; }

/* Floats of the packed weights, shared by the threads. */
static size_t fixed_floats(const dnnk_conv_desc *d) {
  long f = round_up(d->k, PW_MR) * d->c, b = round_up(d->c, PW_MR) * d->k;
  return (size_t)(f > b ? f : b) + 16;
}

/* One thread's floats: the largest of the three passes' buffers. */
static size_t slot_floats(const dnnk_conv_desc *d) {
  pw_geom g = geom(d);
  long fwd = min_l(d->c, PW_DEPTH) * g.cmax + edge_floats();
  long data = min_l(d->c, PW_CT) * g.cmax + edge_floats();
  long wt =
      (long)d->k * d->c + d->k +
      (round_up(min_l(d->k, PW_CT), PW_MR) + min_l(d->c, PW_DEPTH)) * PW_DEPTH +
      edge_floats() + 32;
  long s = fwd > data ? fwd : data;
  return (size_t)(s > wt ? s : wt) + 64;
}

size_t pw_workspace(const dnnk_conv_desc *d, int threads) {
  return fixed_floats(d) + slot_floats(d) * (size_t)(threads > 0 ? threads : 1);
}

/* A pass's grid, workspace (own when the caller's is too small) and
 * threads. */
typedef struct pw_pass {
  pw_geom g;
  float *ws, *own;
  size_t fixed, slot;
  int threads;
} pw_pass;

/* Sets up a pass. */
static void begin(const dnnk_conv_desc *d, float *ws, size_t ws_floats,
                  pw_pass *p) {
  p->g = geom(d);
  p->fixed = fixed_floats(d);
  p->slot = slot_floats(d);
  p->threads = cg_take_workspace(&ws, &ws_floats, p->fixed, p->slot, p->g.items,
                                 &p->own, "pointwise convolution: workspace");
  p->ws = ws;
}

/* Thread t's slot of the pass's workspace. */
static float *slot_of(const pw_pass *p, int t) {
  return p->ws + p->fixed + p->slot * t;
}

/* Packs A (m x depth, element (i, q) = a[i * ms + q * qs]) into slivers of
 * MR rows, each depth steps of MR floats, rows past m zero. */
static void pack_a(const float *a, long ms, long qs, int m, int depth,
                   float *ap) {
  for (int m0 = 0; m0 < m; m0 += PW_MR)
    for (int q = 0; q < depth; ++q)
      for (int i = 0; i < PW_MR; ++i)
        *ap++ = m0 + i < m ? a[(m0 + i) * ms + q * qs] : 0.0f;
}

/* c[i][0, NW) = bias[i] + (set) or += sum_q ap[q][i] * b[q][0, NW) for
 * i < rows; ap one packed sliver from its slice's first step. */
CG_WIDE static void outer_tile(int depth, const float *ap, const float *b,
                               long ldb, float *c, long ldc, int rows, int set,
                               const float *bias) {
  cg_vf acc[PW_MR][2];
  for (int i = 0; i < PW_MR; ++i)
    acc[i][0] = acc[i][1] = (cg_vf){0};
  for (int q = 0; q < depth; ++q) {
    cg_vf b0 = *(const cg_vf *)(b + q * ldb);
    cg_vf b1 = *(const cg_vf *)(b + q * ldb + DNNK_VLEN);
    for (int i = 0; i < PW_MR; ++i) {
      float a = ap[q * PW_MR + i];
      acc[i][0] += a * b0;
      acc[i][1] += a * b1;
    }
  }
  for (int i = 0; i < rows; ++i) {
    cg_vf *d0 = (cg_vf *)(c + i * ldc),
          *d1 = (cg_vf *)(c + i * ldc + DNNK_VLEN);
    if (set) {
      float add = bias ? bias[i] : 0.0f;
      *d0 = acc[i][0] + add;
      *d1 = acc[i][1] + add;
    } else {
      *d0 += acc[i][0];
      *d1 += acc[i][1];
    }
  }
}

/* The last nw < NW columns of a tile, through padded copies in tb. */
static void outer_edge(int depth, const float *ap, const float *b, long ldb,
                       int nw, float *c, long ldc, int rows, int set,
                       const float *bias, float *tb) {
  float *ct = tb + (long)PW_DEPTH * PW_NW;
  for (int q = 0; q < depth; ++q)
    for (int j = 0; j < PW_NW; ++j)
      tb[q * PW_NW + j] = j < nw ? b[q * ldb + j] : 0.0f;
  outer_tile(depth, ap, tb, PW_NW, ct, PW_NW, rows, 1, set ? bias : NULL);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < nw; ++j)
      c[i * ldc + j] =
          set ? ct[i * PW_NW + j] : c[i * ldc + j] + ct[i * PW_NW + j];
}

/* C (m x cols) = bias + (set) or += the depth slice [q0, q0 + depth) of A
 * (packed with depth_all steps) times B (depth x cols, rows ldb apart). */
static void product(int m, int depth_all, int q0, int depth, const float *apk,
                    const float *b, long ldb, int cols, float *c, long ldc,
                    int set, const float *bias, float *tb) {
  for (int m0 = 0; m0 < m; m0 += PW_MR) {
    const float *ap = apk + (long)m0 * depth_all + (long)q0 * PW_MR;
    int rows = (int)min_l(PW_MR, m - m0);
    const float *bi = bias ? bias + m0 : NULL;
    float *cr = c + m0 * ldc;
    int j0 = 0;
    for (; j0 + PW_NW <= cols; j0 += PW_NW)
      outer_tile(depth, ap, b + j0, ldb, cr + j0, ldc, rows, set, bi);
    if (j0 < cols)
      outer_edge(depth, ap, b + j0, ldb, cols - j0, cr + j0, ldc, rows, set, bi,
                 tb);
  }
}

/* The strided points of x's channels [c0, c0 + cc), output rows [u0, u1) of
 * image b, as rows of (u1 - u0) * ow floats. */
CG_NO_CALLS static void gather(const dnnk_conv_desc *d, const pw_geom *g,
                               const float *x, int b, int c0, int cc, int u0,
                               int u1, float *xs) {
  int sh = d->stride_h, sw = d->stride_w, ow = g->ow;
  long cols = (long)(u1 - u0) * ow;
  for (int q = 0; q < cc; ++q) {
    const float *plane = x + ((long)b * d->c + c0 + q) * d->h * d->w;
    float *dst = xs + q * cols;
    for (int u = u0; u < u1; ++u) {
      const float *src = plane + (long)u * sh * d->w;
      float *o = dst + (long)(u - u0) * ow;
      if (sw == 2) {
        copy_stride2(o, src, ow, d->w);
      } else {
        for (int v = 0; v < ow; ++v)
          o[v] = src[v * sw];
      }
    }
  }
}

/* Items of the batch (image, row block) as bounds. */
static void item_rows(const pw_geom *g, long it, int *b, int *u0, int *u1) {
  *b = (int)(it / g->chunks);
  *u0 = (int)(it % g->chunks) * g->rows_per;
  *u1 = (int)min_l(g->oh, *u0 + g->rows_per);
}

/* One item of the forward pass: y's rows [u0, u1) of image b, a depth
 * slice of gathered channels at a time. */
static void forward_item(const dnnk_conv_desc *d, const pw_geom *g,
                         const float *x, const float *apk, const float *bias,
                         long it, float *y, float *xs, float *tb) {
  int b, u0, u1;
  item_rows(g, it, &b, &u0, &u1);
  int cols = (u1 - u0) * g->ow;
  long plane = (long)g->oh * g->ow;
  float *out = y + (long)b * d->k * plane + (long)u0 * g->ow;
  for (int q0 = 0; q0 < d->c; q0 += PW_DEPTH) {
    int dq = (int)min_l(PW_DEPTH, d->c - q0);
    gather(d, g, x, b, q0, dq, u0, u1, xs);
    product(d->k, d->c, q0, dq, apk, xs, cols, cols, out, plane, q0 == 0, bias,
            tb);
  }
}

void pw_forward(const dnnk_conv_desc *d, const float *x, const float *wt,
                const float *bias, float *y, float *ws, size_t ws_floats) {
  pw_pass p;
  begin(d, ws, ws_floats, &p);
  float *apk = align64(p.ws);
  pack_a(wt, d->c, 1, d->k, d->c, apk);
  long next = 0;
#pragma omp parallel num_threads(p.threads)
  {
    float *xs = align64(slot_of(&p, omp_get_thread_num()));
    float *tb = align64(xs + min_l(d->c, PW_DEPTH) * p.g.cmax);
    for (long it; (it = dnnk_claim(&next)) < p.g.items;)
      forward_item(d, &p.g, x, apk, bias, it, y, xs, tb);
  }
  free(p.own);
}

/* Row y of dx's plane from its output row (stride s along it): the points
 * at multiples of s, zeros between. */
CG_NO_CALLS static void put_row(float *row, const float *src, int s, int w) {
  int x = 0;
  if (s == 2) {
    spread_stride2(row, src, w / 2);
    x = w / 2 * 2;
  }
  for (; x < w; ++x)
    row[x] = x % s ? 0.0f : src[x / s];
}

/* dx's rows for output rows [u0, u1) of channels [c0, c0 + ct) of image b,
 * from T (ct x cols, rows ldt apart): each output row's plane row and the
 * zero rows below it up to the next. */
static void scatter(const dnnk_conv_desc *d, const pw_geom *g, const float *t,
                    long ldt, int b, int c0, int ct, int u0, int u1,
                    float *dx) {
  int sh = d->stride_h, w = d->w;
  for (int ci = 0; ci < ct; ++ci) {
    float *plane = dx + ((long)b * d->c + c0 + ci) * d->h * w;
    /* The next plane's rows start a new page, where the hardware
     * prefetcher stops (one core, caches cooled: 0.90 -> 0.84 ms). */
    if (ci + 1 < ct)
      prefetch_span(plane + (long)(d->h + u0 * sh) * w,
                    (long)(u1 - u0) * sh * w, 16, 1);
    for (int u = u0; u < u1; ++u) {
      float *row = plane + (long)u * sh * w;
      put_row(row, t + ci * ldt + (long)(u - u0) * g->ow, d->stride_w, w);
      for (int j = 1; j < sh && u * sh + j < d->h; ++j)
        zero_short(row + (long)j * w, w);
    }
  }
}

/* One item of the data gradient: dx's rows for output rows [u0, u1) of
 * image b, PW_CT channels at a time. */
static void data_item(const dnnk_conv_desc *d, const pw_geom *g,
                      const float *dy, const float *apk, long it, float *dx,
                      float *t, float *tb) {
  int b, u0, u1;
  item_rows(g, it, &b, &u0, &u1);
  int cols = (u1 - u0) * g->ow;
  long plane = (long)g->oh * g->ow;
  const float *src = dy + (long)b * d->k * plane + (long)u0 * g->ow;
  for (int c0 = 0; c0 < d->c; c0 += PW_CT) {
    int ct = (int)min_l(PW_CT, d->c - c0);
    for (int q0 = 0; q0 < d->k; q0 += PW_DEPTH)
      product(ct, d->k, q0, (int)min_l(PW_DEPTH, d->k - q0),
              apk + (long)c0 * d->k, src + q0 * plane, plane, cols, t, cols,
              q0 == 0, NULL, tb);
    scatter(d, g, t, cols, b, c0, ct, u0, u1, dx);
  }
}

void pw_backward_data(const dnnk_conv_desc *d, const float *dy, const float *wt,
                      float *dx, float *ws, size_t ws_floats) {
  pw_pass p;
  begin(d, ws, ws_floats, &p);
  float *apk = align64(p.ws);
  pack_a(wt, 1, d->c, d->c, d->k, apk); /* W^T: rows c, depth k */
  long next = 0;
#pragma omp parallel num_threads(p.threads)
  {
    float *t = align64(slot_of(&p, omp_get_thread_num()));
    float *tb = align64(t + min_l(d->c, PW_CT) * p.g.cmax);
    for (long it; (it = dnnk_claim(&next)) < p.g.items;)
      data_item(d, &p.g, dy, apk, it, dx, t, tb);
  }
  free(p.own);
}

/* Points [q0, q0 + dq) of an item's grid (output rows from u0) of x's
 * channels [c0, c0 + cc) of image b, transposed: xt[q][c], rows ld apart. */
static void gather_t(const dnnk_conv_desc *d, const pw_geom *g, const float *x,
                     int b, int c0, int cc, int u0, int q0, int dq, float *xt,
                     long ld) {
  int sh = d->stride_h, sw = d->stride_w, ow = g->ow;
  for (int c = 0; c < cc; ++c) {
    const float *plane = x + ((long)b * d->c + c0 + c) * d->h * d->w;
    for (int p = q0; p < q0 + dq;) {
      int u = p / ow, v = p % ow;
      int run = (int)min_l(ow - v, q0 + dq - p);
      const float *src = plane + (long)(u0 + u) * sh * d->w + (long)v * sw;
      float *dst = xt + (long)(p - q0) * ld + c;
      for (int e = 0; e < run; ++e)
        dst[e * ld] = src[e * sw];
      p += run;
    }
  }
}

/* One item's share of dW (k x c, private) and db: dW += dY * X_s^T as
 * outer-product tiles over the item's points, a depth slice at a time. */
static void weights_item(const dnnk_conv_desc *d, const pw_geom *g,
                         const float *x, const float *dy, long it, float *dw,
                         float *db, float *ap, float *xt, float *tb) {
  int b, u0, u1;
  item_rows(g, it, &b, &u0, &u1);
  int cols = (u1 - u0) * g->ow;
  long plane = (long)g->oh * g->ow;
  const float *src = dy + (long)b * d->k * plane + (long)u0 * g->ow;
  if (db)
    for (int k = 0; k < d->k; ++k) {
      float sum = 0.0f;
      for (int q = 0; q < cols; ++q)
        sum += src[k * plane + q];
      db[k] += sum;
    }
  for (int q0 = 0; q0 < cols; q0 += PW_DEPTH) {
    int dq = (int)min_l(PW_DEPTH, cols - q0);
    for (int c0 = 0; c0 < d->c; c0 += PW_DEPTH) {
      int cc = (int)min_l(PW_DEPTH, d->c - c0);
      gather_t(d, g, x, b, c0, cc, u0, q0, dq, xt, cc);
      for (int k0 = 0; k0 < d->k; k0 += PW_CT) {
        int kc = (int)min_l(PW_CT, d->k - k0);
        pack_a(src + k0 * plane + q0, plane, 1, kc, dq, ap);
        product(kc, dq, 0, dq, ap, xt, cc, cc, dw + (long)k0 * d->c + c0, d->c,
                0, NULL, tb);
      }
    }
  }
}

void pw_backward_weights(const dnnk_conv_desc *d, const float *x,
                         const float *dy, float *dwt, float *dbias, float *ws,
                         size_t ws_floats) {
  pw_pass p;
  begin(d, ws, ws_floats, &p);
  long nw = (long)d->k * d->c;
#pragma omp parallel num_threads(p.threads)
  {
    int nt = omp_get_num_threads();
    float *dw = slot_of(&p, omp_get_thread_num()), *db = dw + nw;
    float *ap = align64(db + d->k);
    float *xt = align64(ap + round_up(min_l(d->k, PW_CT), PW_MR) * PW_DEPTH);
    float *tb = align64(xt + min_l(d->c, PW_DEPTH) * PW_DEPTH);
    for (long i = 0; i < nw + d->k; ++i)
      dw[i] = 0.0f;
#pragma omp for schedule(static)
    for (long it = 0; it < p.g.items; ++it)
      weights_item(d, &p.g, x, dy, it, dw, dbias ? db : NULL, ap, xt, tb);
      /* Sums over the threads' copies, in thread order. */
#pragma omp for schedule(static)
    for (long i = 0; i < nw + d->k; ++i) {
      float s = 0.0f;
      for (int q = 0; q < nt; ++q)
        s += slot_of(&p, q)[i];
      if (i < nw)
        dwt[i] = s;
      else if (dbias)
        dbias[i - nw] = s;
    }
  }
  free(p.own);
}

#pragma omp end declare target
