/* Direct convolutions on the blocked channel layout (DNNK_NCHWC): tensors are
 * n x ceil(c / CB) x h x w x CB, so the CB channels of a pixel are one
 * vector. Forward and backward data keep a register tile of up to RW output
 * pixels of one row times 2 channel blocks, and run over (input block, kernel
 * row, kernel column, channel in the block): per channel 2 weight vectors
 * and one broadcast input value per pixel. Borders need no padded copies:
 * the rows and columns a tile reads are clipped to the image (taps outside
 * are skipped), interior pixels share one tile, border pixels take 1-pixel
 * tiles with their own column range. The weights' gradient accumulates a
 * CB x CB tap block (CB vectors) over an image's pixels, images split over
 * the threads, private sums added in a fixed order. Weights stay KCRS in the
 * API and are reordered into the workspace by every pass. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "convblk.h"
#include "convgemm.h"
#include "gemm_config.h"
#include "omp_compat.h"

#pragma omp declare target

#define CB DNNK_CB
#define RW DNNK_BK_RW
#if RW < 6 || RW > 16
#error "DNNK_BK_RW must be 6..16"
#endif
#define CB2 (CB * CB)

/* Keeps 512-bit generic vectors whole on AVX-512 (see gemm_micro.c). */
#if defined(__clang__) && CB * 32 >= 512
#define BK_WIDE __attribute__((min_vector_width(CB * 32)))
#else
#define BK_WIDE
#endif

/* One channel block of a pixel: one vector register. */
typedef float bk_vf
    __attribute__((vector_size(CB * sizeof(float)), aligned(4)));

/* A layer's sizes, dilation 0 read as 1, with the output and block counts. */
typedef struct bk_shape {
  int n, c, h, w, k, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow, cbn, kbn;
} bk_shape;

/* One loop level of a tile's reduction: count, input and weight steps. */
typedef struct bk_loop {
  int n;
  long x, w;
} bk_loop;

/* The shape of d. */
static bk_shape shape_of(const dnnk_conv_desc *d) {
  bk_shape s = {d->n,
                d->c,
                d->h,
                d->w,
                d->k,
                d->kh,
                d->kw,
                d->stride_h,
                d->stride_w,
                d->pad_h,
                d->pad_w,
                d->dil_h > 0 ? d->dil_h : 1,
                d->dil_w > 0 ? d->dil_w : 1,
                dnnk_conv_out_h(d),
                dnnk_conv_out_w(d),
                (d->c + CB - 1) / CB,
                (d->k + CB - 1) / CB};
  return s;
}

/* Aligns p up to a 64-byte cache line. */
static inline float *bk_align(float *p) {
  return (float *)(((uintptr_t)p + 63) & ~(uintptr_t)63);
}

/* Floats of the reordered weights: every (output block, input block, tap). */
static size_t wfloats(const bk_shape *s) {
  return (size_t)s->kbn * s->cbn * s->kh * s->kw * CB2;
}

/* One thread's part of the weights' gradient: private blocked dW and db. */
static size_t wgt_slot(const bk_shape *s) {
  return (wfloats(s) + (size_t)s->kbn * CB + 15) / 16 * 16;
}

int dnnk_channel_block(void) { return CB; }

size_t dnnk_blocked_size(int n, int c, int h, int w) {
  return (size_t)n * ((c + CB - 1) / CB) * CB * h * w;
}

void dnnk_to_blocked(const float *x, int n, int c, int h, int w, float *xb) {
  int cbn = (c + CB - 1) / CB;
  long hw = (long)h * w;
#pragma omp parallel for collapse(2) schedule(static)
  for (int b = 0; b < n; ++b)
    for (int cb = 0; cb < cbn; ++cb) {
      float *o = xb + ((long)b * cbn + cb) * hw * CB;
      int cn = c - cb * CB < CB ? c - cb * CB : CB;
      const float *in = x + ((long)b * c + (long)cb * CB) * hw;
      for (long p = 0; p < hw; ++p)
        for (int i = 0; i < CB; ++i)
          o[p * CB + i] = i < cn ? in[i * hw + p] : 0.0f;
    }
}

void dnnk_from_blocked(const float *xb, int n, int c, int h, int w, float *x) {
  int cbn = (c + CB - 1) / CB;
  long hw = (long)h * w;
#pragma omp parallel for collapse(2) schedule(static)
  for (int b = 0; b < n; ++b)
    for (int cb = 0; cb < cbn; ++cb) {
      const float *in = xb + ((long)b * cbn + cb) * hw * CB;
      int cn = c - cb * CB < CB ? c - cb * CB : CB;
      float *o = x + ((long)b * c + (long)cb * CB) * hw;
      for (int i = 0; i < cn; ++i)
        for (long p = 0; p < hw; ++p)
          o[i * hw + p] = in[p * CB + i];
    }
}

/* KCRS weights reordered per (kb, cb, tap) into CB x CB blocks: forward
 * [ci][co] (a vector over output channels), backward data [co][ci]. Rows of
 * blocks [kb0, kb1) of the forward order; lanes past k or c are zero. */
static void pack_weights(const bk_shape *s, const float *wt, int bwd, float *o,
                         int blk) {
  int kb = blk / s->cbn, cb = blk % s->cbn, taps = s->kh * s->kw;
  float *dst = o + (bwd ? ((long)cb * s->kbn + kb) : ((long)kb * s->cbn + cb)) *
                       taps * CB2;
  for (int t = 0; t < taps; ++t)
    for (int i = 0; i < CB; ++i)
      for (int j = 0; j < CB; ++j) {
        /* forward: i input lane, j output lane; backward: the reverse. */
        int co = bwd ? i : j, ci = bwd ? j : i;
        int ko = kb * CB + co, cin = cb * CB + ci;
        dst[(long)t * CB2 + i * CB + j] =
            ko < s->k && cin < s->c ? wt[((long)ko * s->c + cin) * taps + t]
                                    : 0.0f;
      }
}

/* The register tile: rw pixels x nk blocks of out (pixel step op, block step
 * ok) = bias + sum over the 3 loop levels and cc lanes of x (pixel step xp,
 * lane step 1) times w (lane step CB, second block at wk). rw, nk and, for
 * full blocks, cc are constants at every call, so it unrolls. */
BK_WIDE static inline __attribute__((always_inline)) void
tile(const int rw, const int nk, const int cc, const float *restrict x, long xp,
     const float *restrict w, long wk, bk_loop l0, bk_loop l1, bk_loop l2,
     float *restrict out, long op, long ok, const float *restrict bias) {
  bk_vf acc[2][RW];
  bk_vf b0 = {0}, b1 = {0};
  if (bias) {
    b0 = *(const bk_vf *)bias;
    if (nk > 1)
      b1 = *(const bk_vf *)(bias + CB);
  }
  for (int j = 0; j < rw; ++j) {
    acc[0][j] = b0;
    if (nk > 1)
      acc[1][j] = b1;
  }
  for (int i0 = 0; i0 < l0.n; ++i0)
    for (int i1 = 0; i1 < l1.n; ++i1)
      for (int i2 = 0; i2 < l2.n; ++i2) {
        const float *xq = x + i0 * l0.x + i1 * l1.x + i2 * l2.x;
        const float *wq = w + i0 * l0.w + i1 * l1.w + i2 * l2.w;
        for (int ci = 0; ci < cc; ++ci) {
          bk_vf w0 = *(const bk_vf *)(wq + ci * CB), w1 = {0};
          if (nk > 1)
            w1 = *(const bk_vf *)(wq + wk + ci * CB);
          for (int j = 0; j < rw; ++j) {
            float a = xq[j * xp + ci];
            acc[0][j] += a * w0;
            if (nk > 1)
              acc[1][j] += a * w1;
          }
        }
      }
  for (int j = 0; j < rw; ++j) {
    *(bk_vf *)(out + j * op) = acc[0][j];
    if (nk > 1)
      *(bk_vf *)(out + ok + j * op) = acc[1][j];
  }
}

/* tile() with rw, nk and full blocks (cc == CB) made constants. */
BK_WIDE static void run_tile(int rw, int nk, int cc, const float *x, long xp,
                             const float *w, long wk, bk_loop l0, bk_loop l1,
                             bk_loop l2, float *out, long op, long ok,
                             const float *bias) {
#define BK_ARGS w, wk, l0, l1, l2, out, op, ok, bias
  /* Unit and 2-pixel steps as constants: each pixel's input is then an
   * immediate offset from one pointer, not one register per pixel. */
#define BK_CASE(R)                                                             \
  case R:                                                                      \
    if (nk > 1 && cc == CB && xp == CB)                                        \
      tile(R, 2, CB, x, CB, BK_ARGS);                                          \
    else if (nk > 1 && cc == CB && xp == 2 * CB)                               \
      tile(R, 2, CB, x, 2 * CB, BK_ARGS);                                      \
    else if (nk > 1 && cc == CB)                                               \
      tile(R, 2, CB, x, xp, BK_ARGS);                                          \
    else if (nk > 1)                                                           \
      tile(R, 2, cc, x, xp, BK_ARGS);                                          \
    else if (cc == CB && xp == CB)                                             \
      tile(R, 1, CB, x, CB, BK_ARGS);                                          \
    else if (cc == CB && xp == 2 * CB)                                         \
      tile(R, 1, CB, x, 2 * CB, BK_ARGS);                                      \
    else if (cc == CB)                                                         \
      tile(R, 1, CB, x, xp, BK_ARGS);                                          \
    else                                                                       \
      tile(R, 1, cc, x, xp, BK_ARGS);                                          \
    break;
  switch (rw) {
    BK_CASE(1)
    BK_CASE(2)
    BK_CASE(3)
    BK_CASE(4)
    BK_CASE(5)
    BK_CASE(6)
#if RW >= 7
    BK_CASE(7)
#endif
#if RW >= 8
    BK_CASE(8)
#endif
#if RW >= 9
    BK_CASE(9)
#endif
#if RW >= 10
    BK_CASE(10)
#endif
#if RW >= 11
    BK_CASE(11)
#endif
#if RW >= 12
    BK_CASE(12)
#endif
#if RW >= 13
    BK_CASE(13)
#endif
#if RW >= 14
    BK_CASE(14)
#endif
#if RW >= 15
    BK_CASE(15)
#endif
#if RW >= 16
    BK_CASE(16)
#endif
  default:
    break;
  }
#undef BK_CASE
#undef BK_ARGS
}

/* Output columns [*xa, *xb) whose taps all fall inside the input row. */
static void interior(int in, int out, int k, int st, int pad, int dil, int *xa,
                     int *xb) {
  int a = (pad + st - 1) / st, num = in - 1 + pad - (k - 1) * dil;
  int b = num < 0 ? 0 : num / st + 1;
  a = a < out ? a : out;
  b = b < out ? b : out;
  *xa = a;
  *xb = b < a ? a : b;
}

/* Taps [*t0, *t1) of a k-tap axis that read inside [0, in) from o*st-pad. */
static void tap_range(int o, int in, int k, int st, int pad, int dil, int *t0,
                      int *t1) {
  int a = 0, b = k, base = o * st - pad;
  while (a < k && base + a * dil < 0)
    ++a;
  while (b > a && base + (b - 1) * dil >= in)
    --b;
  *t0 = a;
  *t1 = b;
}

/* Touches the input rows and output pixels of row oy + 1 ahead of time:
 * on data not in cache (a batch larger than the L2) the hardware
 * prefetcher does not keep up with strided rows, and stores wait for their
 * lines (1x1/2 forward, one core, cold caches: 0.67 -> 0.41 ms). */
static void prefetch_next(const bk_shape *s, const float *x, const float *y,
                          int b, int kb, int nk, int oy) {
  if (++oy >= s->oh)
    return;
  int r0, r1;
  tap_range(oy, s->h, s->kh, s->sh, s->ph, s->dh, &r0, &r1);
  long rowf = (long)s->w * CB;
  /* Rows the previous output row read are in cache already. */
  int first = s->sh < s->kh * s->dh && r1 - 1 > r0 ? r1 - 1 : r0;
  /* 1-column kernels read every sw-th pixel only. */
  long step = s->kw == 1 && s->sw * CB > 16 ? (long)s->sw * CB : 16;
  for (int cb = 0; cb < s->cbn; ++cb)
    for (int r = first; r < r1; ++r)
      prefetch_span(x + (((long)b * s->cbn + cb) * s->h + oy * s->sh - s->ph +
                         r * s->dh) *
                            rowf,
                    rowf, step, 0);
  for (int k = 0; k < nk; ++k)
    prefetch_span(y + (((long)b * s->kbn + kb + k) * s->oh + oy) * s->ow * CB,
                  (long)s->ow * CB, 16, 1);
}

/* Forward, one output row oy of image b and blocks 2g, 2g + 1. */
static void fwd_row(const bk_shape *s, const float *x, const float *wf,
                    const float *bf, float *y, int b, int g, int oy, int xa,
                    int xb, int cc) {
  int kb = 2 * g, nk = kb + 1 < s->kbn ? 2 : 1, r0, r1;
  tap_range(oy, s->h, s->kh, s->sh, s->ph, s->dh, &r0, &r1);
  long taps = (long)s->kh * s->kw, wk = s->cbn * taps * CB2;
  long rowf = (long)s->w * CB, ok = (long)s->oh * s->ow * CB;
  const float *wb = wf + kb * wk + (long)r0 * s->kw * CB2;
  float *out = y + (((long)b * s->kbn + kb) * s->oh + oy) * s->ow * CB;
  int iy = r0 < r1 ? oy * s->sh - s->ph + r0 * s->dh : 0;
  const float *xrow = x + ((long)b * s->cbn * s->h + iy) * rowf;
  bk_loop l0 = {s->cbn, (long)s->h * rowf, taps * CB2};
  bk_loop l1 = {r1 - r0, s->dh * rowf, (long)s->kw * CB2};
  const float *bias = bf + kb * CB;
  long xp = (long)s->sw * CB;
  prefetch_next(s, x, y, b, kb, nk, oy);
  int n = xb - xa, nt = (n + RW - 1) / RW;
  bk_loop l2 = {s->kw, (long)s->dw * CB, CB2};
  for (int t = 0; t < nt; ++t) {
    int o0 = xa + n * t / nt, o1 = xa + n * (t + 1) / nt;
    run_tile(o1 - o0, nk, cc, xrow + (long)(o0 * s->sw - s->pw) * CB, xp, wb,
             wk, l0, l1, l2, out + (long)o0 * CB, CB, ok, bias);
  }
  for (int ox = 0; ox < s->ow; ++ox) {
    if (ox == xa)
      ox = xb;
    if (ox >= s->ow)
      break;
    int s0, s1;
    tap_range(ox, s->w, s->kw, s->sw, s->pw, s->dw, &s0, &s1);
    bk_loop le = {s1 - s0, (long)s->dw * CB, CB2};
    long ix = s0 < s1 ? ox * s->sw - s->pw + s0 * s->dw : 0;
    run_tile(1, nk, cc, xrow + ix * CB, xp, wb + (long)s0 * CB2, wk, l0, l1, le,
             out + (long)ox * CB, CB, ok, bias);
  }
}

/* Taps of an axis that reach output point i of a stride-st correlation
 * with padding pad and dilation dil: an arithmetic progression first, first
 * + step, ... of count taps (tap t reads dy at (i + pad - t dil) / st). */
static void phase_taps(int i, int k, int st, int pad, int dil, int *first,
                       int *step, int *count) {
  int f = 0, sp = 0, c = 0;
  for (int t = 0; t < k; ++t) {
    int e = i + pad - t * dil;
    if (((e % st) + st) % st != 0)
      continue;
    if (c == 0)
      f = t;
    else if (c == 1)
      sp = t - f;
    ++c;
  }
  *first = f;
  *step = sp;
  *count = c;
}

/* Backward data, one dx row iy of image b and input blocks 2g, 2g + 1: per
 * column phase px, the pixels px + sw j read dy at j + e(s) for the taps s
 * of that phase, a unit step, so the forward tile serves. */
static void bwd_row(const bk_shape *s, const float *dy, const float *wd,
                    float *dx, int b, int g, int iy, int cc) {
  int cb = 2 * g, nk = cb + 1 < s->cbn ? 2 : 1;
  long taps = (long)s->kh * s->kw, wk = s->kbn * taps * CB2;
  long rowf = (long)s->ow * CB;
  /* Kernel rows reaching iy whose dy row is inside [0, oh). */
  int rf, rstep, rn, m0 = 0, m1;
  phase_taps(iy, s->kh, s->sh, s->ph, s->dh, &rf, &rstep, &rn);
  int dr = rstep * s->dh / s->sh; /* dy rows per step, downwards */
  int ef = rn ? (iy + s->ph - rf * s->dh) / s->sh : 0;
  for (; m0 < rn && ef - m0 * dr >= s->oh; ++m0)
    ;
  for (m1 = rn; m1 > m0 && ef - (m1 - 1) * dr < 0; --m1)
    ;
  int oy = m1 > m0 ? ef - m0 * dr : 0;
  const float *dyrow = dy + ((long)b * s->kbn * s->oh + oy) * rowf;
  const float *wb = wd + cb * wk + (long)(rf + m0 * rstep) * s->kw * CB2;
  bk_loop l0 = {s->kbn, (long)s->oh * rowf, taps * CB2};
  bk_loop l1 = {m1 - m0, -dr * rowf, (long)rstep * s->kw * CB2};
  float *out = dx + (((long)b * s->cbn + cb) * s->h + iy) * (long)s->w * CB;
  long ok = (long)s->h * s->w * CB, op = (long)s->sw * CB;
  /* The next dx row's lines, as in the forward pass (prefetch_next). */
  if (iy + 1 < s->h)
    for (int k = 0; k < nk; ++k)
      prefetch_span(out + k * ok + (long)s->w * CB, (long)s->w * CB, 16, 1);
  for (int px = 0; px < s->sw && px < s->w; ++px) {
    int nj = (s->w - px + s->sw - 1) / s->sw, sf, sstep, sn;
    phase_taps(px, s->kw, s->sw, s->pw, s->dw, &sf, &sstep, &sn);
    int de = sstep * s->dw / s->sw;
    int e0 = sn ? (px + s->pw - sf * s->dw) / s->sw : 0,
        el = e0 - (sn - 1) * de;
    /* Interior: every tap's dy column j + e in [0, ow). */
    int ja = sn ? (-el > 0 ? -el : 0) : 0, jb = sn ? s->ow - e0 : 0;
    ja = ja < nj ? ja : nj;
    jb = jb < nj ? jb : nj;
    jb = jb < ja ? ja : jb;
    int n = jb - ja, nt = (n + RW - 1) / RW;
    const float *wc = wb + (long)sf * CB2;
    bk_loop l2 = {sn, -de * (long)CB, (long)sstep * CB2};
    for (int t = 0; t < nt; ++t) {
      int j0 = ja + n * t / nt, j1 = ja + n * (t + 1) / nt;
      run_tile(j1 - j0, nk, cc, dyrow + (long)(j0 + e0) * CB, CB, wc, wk, l0,
               l1, l2, out + (px + (long)s->sw * j0) * CB, op, ok, NULL);
    }
    for (int j = 0; j < nj; ++j) {
      if (j == ja)
        j = jb;
      if (j >= nj)
        break;
      int a = 0, z = sn;
      while (a < sn && j + e0 - a * de >= s->ow)
        ++a;
      while (z > a && j + e0 - (z - 1) * de < 0)
        --z;
      bk_loop le = {z - a, -de * (long)CB, (long)sstep * CB2};
      long ox = z > a ? j + e0 - a * de : 0;
      run_tile(1, nk, cc, dyrow + ox * CB, CB, wc + (long)a * sstep * CB2, wk,
               l0, l1, le, out + (px + (long)s->sw * j) * CB, op, ok, NULL);
    }
  }
}

size_t bk_workspace(const dnnk_conv_desc *d, int threads) {
  bk_shape s = shape_of(d);
  size_t fwd = wfloats(&s) + (size_t)s.kbn * CB + 32;
  size_t wgt = wgt_slot(&s) * (size_t)(threads > 0 ? threads : 1) + 32;
  return fwd > wgt ? fwd : wgt;
}

/* The caller's workspace if it holds need floats, else a new one (*own). */
static float *take(float *ws, size_t ws_floats, size_t need, float **own) {
  *own = NULL;
  if (ws && ws_floats >= need)
    return bk_align(ws);
  *own = (float *)dnnk_alloc(need * sizeof(float),
                             "blocked convolution: workspace");
  return bk_align(*own);
}

/* Packs the weight blocks the thread claims from next[0], then waits for
 * all nblk: the threads then take (image, channel group) items from
 * next[1] as they come, so one that wakes late does not hold the others
 * (a barrier and static shares did: short passes after a pause). */
static void pack_claimed(const bk_shape *s, const float *wt, int bwd, float *o,
                         long *next, long *packed, long nblk) {
  for (long blk; (blk = dnnk_claim(&next[0])) < nblk;) {
    pack_weights(s, wt, bwd, o, (int)blk);
    dnnk_count_done(packed);
  }
  dnnk_wait_count(packed, nblk);
}

/* The image of item it of a pass whose items are (image, group) pairs. */
static inline int b_of(long it, int groups) { return (int)(it / groups); }

void bk_forward(const dnnk_conv_desc *d, const float *x, const float *wt,
                const float *bias, float *y, float *ws, size_t ws_floats) {
  bk_shape s = shape_of(d);
  float *own, *wf = take(ws, ws_floats, bk_workspace(d, 1), &own);
  float *bf = wf + wfloats(&s);
  for (int i = 0; i < s.kbn * CB; ++i)
    bf[i] = bias && i < s.k ? bias[i] : 0.0f;
  int xa, xb, groups = (s.kbn + 1) / 2;
  interior(s.w, s.ow, s.kw, s.sw, s.pw, s.dw, &xa, &xb);
  int cc = s.cbn == 1 ? s.c : CB; /* one partial block: only its lanes */
  long next[2] = {0, 0}, packed = 0, nblk = (long)s.kbn * s.cbn;
#pragma omp parallel
  {
    pack_claimed(&s, wt, 0, wf, next, &packed, nblk);
    for (long it; (it = dnnk_claim(&next[1])) < (long)s.n * groups;)
      for (int oy = 0; oy < s.oh; ++oy)
        fwd_row(&s, x, wf, bf, y, b_of(it, groups), (int)(it % groups), oy, xa,
                xb, cc);
  }
  free(own);
}

void bk_backward_data(const dnnk_conv_desc *d, const float *dy, const float *wt,
                      float *dx, float *ws, size_t ws_floats) {
  bk_shape s = shape_of(d);
  float *own, *wd = take(ws, ws_floats, bk_workspace(d, 1), &own);
  int groups = (s.cbn + 1) / 2;
  int cc = s.kbn == 1 ? s.k : CB;
  long next[2] = {0, 0}, packed = 0, nblk = (long)s.kbn * s.cbn;
#pragma omp parallel
  {
    pack_claimed(&s, wt, 1, wd, next, &packed, nblk);
    for (long it; (it = dnnk_claim(&next[1])) < (long)s.n * groups;)
      for (int iy = 0; iy < s.h; ++iy)
        bwd_row(&s, dy, wd, dx, b_of(it, groups), (int)(it % groups), iy, cc);
  }
  free(own);
}

/* acc (a CB x CB tap block, [ci][co]) += sum over ny x nx pixels of x's cc
 * lanes times dy's vector; cc is a constant at every call. */
BK_WIDE static inline __attribute__((always_inline)) void
wtile(const int cc, float *restrict acc, const float *restrict dyp,
      const float *restrict xp, int ny, int nx, long dyr, long xr, long xpx) {
  bk_vf a[CB];
  for (int i = 0; i < cc; ++i)
    a[i] = *(const bk_vf *)(acc + i * CB);
  for (int y = 0; y < ny; ++y) {
    const float *dq = dyp + y * dyr, *xq = xp + y * xr;
    for (int x = 0; x < nx; ++x) {
      bk_vf g = *(const bk_vf *)(dq + x * CB);
      const float *xv = xq + x * xpx;
      for (int i = 0; i < cc; ++i)
        a[i] += xv[i] * g;
    }
  }
  for (int i = 0; i < cc; ++i)
    *(bk_vf *)(acc + i * CB) = a[i];
}

/* Two output blocks' tap blocks (a0, a1) over half the input lanes (lanes
 * h .. h + CB / 2): 16 accumulators take 2 dy loads and CB / 2 broadcasts
 * per pixel, not 1 and CB (wtile is load-bound at CB = 16). */
BK_WIDE static void wtile2(float *restrict a0, float *restrict a1,
                           const float *restrict dy0, const float *restrict dy1,
                           const float *restrict xp, int h, int ny, int nx,
                           long dyr, long xr, long xpx) {
  enum { H = CB / 2 };
  bk_vf a[2][H];
  for (int i = 0; i < H; ++i) {
    a[0][i] = *(const bk_vf *)(a0 + (h + i) * CB);
    a[1][i] = *(const bk_vf *)(a1 + (h + i) * CB);
  }
  for (int y = 0; y < ny; ++y) {
    const float *d0 = dy0 + y * dyr, *d1 = dy1 + y * dyr, *xq = xp + y * xr + h;
    for (int x = 0; x < nx; ++x) {
      bk_vf g0 = *(const bk_vf *)(d0 + x * CB);
      bk_vf g1 = *(const bk_vf *)(d1 + x * CB);
      const float *xv = xq + x * xpx;
      for (int i = 0; i < H; ++i) {
        a[0][i] += xv[i] * g0;
        a[1][i] += xv[i] * g1;
      }
    }
  }
  for (int i = 0; i < H; ++i) {
    *(bk_vf *)(a0 + (h + i) * CB) = a[0][i];
    *(bk_vf *)(a1 + (h + i) * CB) = a[1][i];
  }
}

/* wtile() with cc a constant: CB, or the lanes of a single partial block. */
BK_WIDE static void run_wtile(int cc, float *acc, const float *dyp,
                              const float *xp, int ny, int nx, long dyr,
                              long xr, long xpx) {
#define BK_W(C)                                                                \
  case C:                                                                      \
    wtile(C, acc, dyp, xp, ny, nx, dyr, xr, xpx);                              \
    break;
  switch (cc) {
    BK_W(1)
    BK_W(2)
    BK_W(3)
    BK_W(4)
#if CB >= 8
    BK_W(5)
    BK_W(6)
    BK_W(7)
    BK_W(8)
#endif
#if CB >= 16
    BK_W(9)
    BK_W(10)
    BK_W(11)
    BK_W(12)
    BK_W(13)
    BK_W(14)
    BK_W(15)
    BK_W(16)
#endif
  default:
    break;
  }
#undef BK_W
}

/* Image b's share of the weights' (mine) and bias' (db, may be NULL)
 * gradients, blocked. */
static void wgt_image(const bk_shape *s, const float *x, const float *dy, int b,
                      int cc, float *mine, float *db) {
  long taps = (long)s->kh * s->kw, xplane = (long)s->h * s->w * CB;
  long yplane = (long)s->oh * s->ow * CB;
  /* Full input blocks take output blocks in pairs (wtile2). */
  int pair = cc == CB && CB >= 8;
  for (int kb = 0; kb < s->kbn; kb += pair && kb + 1 < s->kbn ? 2 : 1) {
    int two = pair && kb + 1 < s->kbn;
    const float *dyb = dy + ((long)b * s->kbn + kb) * yplane;
    if (db)
      for (int u = 0; u <= two; ++u) {
        bk_vf sum = *(bk_vf *)(db + (kb + u) * CB);
        for (long p = 0; p < (long)s->oh * s->ow; ++p)
          sum += *(const bk_vf *)(dyb + u * yplane + p * CB);
        *(bk_vf *)(db + (kb + u) * CB) = sum;
      }
    for (int cb = 0; cb < s->cbn; ++cb) {
      const float *xb = x + ((long)b * s->cbn + cb) * xplane;
      for (int r = 0; r < s->kh; ++r) {
        /* Output rows whose input row iy = oy sh - ph + r dh is inside. */
        int lo = s->ph - r * s->dh, hi = s->h - 1 + s->ph - r * s->dh;
        int oy0 = lo > 0 ? (lo + s->sh - 1) / s->sh : 0;
        int oy1 = hi < 0 ? 0 : hi / s->sh + 1;
        oy1 = oy1 < s->oh ? oy1 : s->oh;
        if (oy0 >= oy1)
          continue;
        for (int t = 0; t < s->kw; ++t) {
          int lx = s->pw - t * s->dw, hx = s->w - 1 + s->pw - t * s->dw;
          int ox0 = lx > 0 ? (lx + s->sw - 1) / s->sw : 0;
          int ox1 = hx < 0 ? 0 : hx / s->sw + 1;
          ox1 = ox1 < s->ow ? ox1 : s->ow;
          if (ox0 >= ox1)
            continue;
          long iy = (long)oy0 * s->sh - s->ph + r * s->dh;
          long ix = (long)ox0 * s->sw - s->pw + t * s->dw;
          float *acc =
              mine + (((long)kb * s->cbn + cb) * taps + r * s->kw + t) * CB2;
          const float *dyp = dyb + ((long)oy0 * s->ow + ox0) * CB;
          const float *xp = xb + (iy * s->w + ix) * CB;
          long dyr = (long)s->ow * CB, xr = (long)s->sh * s->w * CB;
          if (two)
            for (int h = 0; h < CB; h += CB / 2)
              wtile2(acc, acc + (long)s->cbn * taps * CB2, dyp, dyp + yplane,
                     xp, h, oy1 - oy0, ox1 - ox0, dyr, xr, (long)s->sw * CB);
          else
            run_wtile(cc, acc, dyp, xp, oy1 - oy0, ox1 - ox0, dyr, xr,
                      (long)s->sw * CB);
        }
      }
    }
  }
}

void bk_backward_weights(const dnnk_conv_desc *d, const float *x,
                         const float *dy, float *dwt, float *dbias, float *ws,
                         size_t ws_floats) {
  bk_shape s = shape_of(d);
  size_t slot = wgt_slot(&s);
  int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  threads = threads < s.n ? threads : (s.n > 0 ? s.n : 1);
  if (ws && ws_floats >= slot + 32) {
    size_t fit = (ws_floats - 32) / slot;
    threads = (size_t)threads < fit ? threads : (int)fit;
  }
  float *own, *base = take(ws, ws_floats, slot * threads + 32, &own);
  long taps = (long)s.kh * s.kw, total = (long)s.k * s.c * taps;
  int cc = s.cbn == 1 ? s.c : CB;
#pragma omp parallel num_threads(threads)
  {
    int nt = omp_get_num_threads();
    float *mine = base + slot * omp_get_thread_num();
    memset(mine, 0, slot * sizeof(float));
#pragma omp for schedule(static)
    for (int b = 0; b < s.n; ++b)
      wgt_image(&s, x, dy, b, cc, mine, dbias ? mine + wfloats(&s) : NULL);
      /* Private sums added in thread order: the same bits at a given count. */
#pragma omp for schedule(static)
    for (long i = 0; i < total; ++i) {
      long ko = i / (s.c * taps), cin = i / taps % s.c, t = i % taps;
      long at = (((ko / CB) * s.cbn + cin / CB) * taps + t) * CB2 +
                (cin % CB) * CB + ko % CB;
      float sum = 0;
      for (int u = 0; u < nt; ++u)
        sum += base[slot * u + at];
      dwt[i] = sum;
    }
    if (dbias) {
#pragma omp for schedule(static)
      for (int ko = 0; ko < s.k; ++ko) {
        float sum = 0;
        for (int u = 0; u < nt; ++u)
          sum += base[slot * u + wfloats(&s) + ko];
        dbias[ko] = sum;
      }
    }
  }
  free(own);
}

#pragma omp end declare target
