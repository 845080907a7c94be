/* Convolution passes by convGemm (convgemm.h), NCHW or NHWC:
 *   forward:          Y (k x P) = W (k x Q) * B_x, B_x the virtual im2col
 *                     matrix of x (rows channel x tap, columns output points);
 *   backward data:    per stride phase (ry, rx) of dx, a stride-1 correlation
 *                     of dy with the taps that reach that phase:
 *                     dX_phase (c x P_phase) = W_phase^T * B_dy;
 *   backward weights: dW (k x Q) = dY (k x P) * B_x^T.
 * No column matrix exists in any pass (im2col.c keeps the explicit lowering
 * as public routines). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv1x1.h"
#include "conv_c1.h"
#include "conv_check.h"
#include "convblk.h"
#include "convgemm.h"
#include "dnnk.h"
#include "omp_compat.h"

#pragma omp declare target

/* Dilation of an axis (0 in the descriptor means none). */
static inline int dil(int v) { return v > 1 ? v : 1; }

/* Outputs along one axis; 0 when the stride or the kernel's span leave
 * none (C's division would round a negative room up to one). */
static int out_len(long size, long pad, long k, long dl, long stride) {
  long room = size + 2 * pad - (dl * (k - 1) + 1);
  if (stride < 1 || k < 1 || room < 0)
    return 0;
  long n = room / stride + 1;
  return n > INT_MAX ? 0 : (int)n;
}

int dnnk_conv_out_h(const dnnk_conv_desc *d) {
  return out_len(d->h, d->pad_h, d->kh, dil(d->dil_h), d->stride_h);
}

int dnnk_conv_out_w(const dnnk_conv_desc *d) {
  return out_len(d->w, d->pad_w, d->kw, dil(d->dil_w), d->stride_w);
}

const char *dnnk_conv_check(const dnnk_conv_desc *d) {
  if (!d)
    return "no layer (NULL descriptor)";
  if (d->n < 1 || d->c < 1 || d->h < 1 || d->w < 1)
    return "the batch, input channels, height and width must be at least 1";
  if (d->k < 1 || d->kh < 1 || d->kw < 1)
    return "the output channels and kernel sizes must be at least 1";
  if (d->stride_h < 1 || d->stride_w < 1)
    return "the strides must be at least 1";
  if (d->pad_h < 0 || d->pad_w < 0 || d->dil_h < 0 || d->dil_w < 0)
    return "padding and dilation must not be negative";
  if (dnnk_conv_out_h(d) < 1)
    return "the kernel (with its dilation) is taller than the padded input";
  if (dnnk_conv_out_w(d) < 1)
    return "the kernel (with its dilation) is wider than the padded input";
  const double lim = 2147483647.0;
  double taps = (double)d->c * d->kh * d->kw;
  double points = (double)d->n * dnnk_conv_out_h(d) * dnnk_conv_out_w(d);
  if ((double)d->n * d->c * d->h * d->w > lim || taps * d->k > lim ||
      points * d->k > lim || taps * points > lim ||
      2.0 * d->pad_h + d->h > lim || 2.0 * d->pad_w + d->w > lim)
    return "the layer is too large (a tensor or the column matrix would have "
           "2^31 elements or more)";
  return NULL;
}

void dnnk_require_conv(const dnnk_conv_desc *d, const char *fn) {
  const char *why = dnnk_conv_check(d);
  if (why) {
    fprintf(stderr, "dnnk error: %s: invalid convolution: %s\n", fn, why);
    abort();
  }
}

/* Forward taps of one axis: kernel index i reads i * dil - pad. */
static cg_taps taps_fwd(int k, int dl, int pad) {
  cg_taps t = {k, -pad, dl, 0, 1};
  return t;
}

/* An n x c x h x w tensor in layout, as strides. */
static cg_tensor tensor(int layout, int c, int h, int w) {
  cg_tensor t;
  t.h = h;
  t.w = w;
  if (layout == DNNK_NHWC) {
    t.bs = (long)h * w * c;
    t.cs = 1;
    t.ys = (long)w * c;
    t.xs = c;
  } else {
    t.bs = (long)c * h * w;
    t.cs = (long)h * w;
    t.ys = w;
    t.xs = 1;
  }
  return t;
}

/* KCRS weights as the forward A operand (rows: output channels). */
static cg_weights weights_fwd(const dnnk_conv_desc *d, const float *wt) {
  cg_weights w = {wt, (long)d->c * d->kh * d->kw, (long)d->kh * d->kw, d->kw,
                  1};
  return w;
}

/* B_x: x gathered through the forward taps over the output grid. */
static cg_gather gather_x(const dnnk_conv_desc *d, int layout, const float *x) {
  cg_gather g;
  g.src = x;
  g.t = tensor(layout, d->c, d->h, d->w);
  g.n = d->n;
  g.gu = dnnk_conv_out_h(d);
  g.gv = dnnk_conv_out_w(d);
  g.sy = d->stride_h;
  g.sx = d->stride_w;
  g.nch = d->c;
  g.ty = taps_fwd(d->kh, dil(d->dil_h), d->pad_h);
  g.tx = taps_fwd(d->kw, dil(d->dil_w), d->pad_w);
  g.chan_last = layout == DNNK_NHWC;
  return g;
}

/* The output (or dy) tensor as the target of C's columns. */
static cg_scatter scatter_y(const dnnk_conv_desc *d, int layout, float *y) {
  cg_scatter s;
  s.dst = y;
  s.t = tensor(layout, d->k, dnnk_conv_out_h(d), dnnk_conv_out_w(d));
  s.ty = s.tx = 1;
  s.oy = s.ox = 0;
  return s;
}

/* Greatest common divisor. */
static int gcd(int a, int b) { return b ? gcd(b, a % b) : a; }

/* Taps of one axis reaching input phase r: kernel index i contributes when
 * t = r + pad - i * dil is a multiple of the stride, and reads dy at grid +
 * t / stride. Such i step by stride / gcd(stride, dil). */
static cg_taps phase_taps(int r, int pad, int k, int dl, int s) {
  cg_taps t = {0, 0, 0, 0, s / gcd(s, dl)};
  int i0 = 0;
  while (i0 < t.dk && i0 < k && ((r + pad - i0 * dl) % s + s) % s != 0)
    ++i0;
  if (i0 >= t.dk || i0 >= k)
    return t;
  t.k0 = i0;
  t.n = (k - 1 - i0) / t.dk + 1;
  t.off0 = (r + pad - i0 * dl) / s;
  t.doff = -(t.dk * dl) / s;
  return t;
}

/* B_dy of phase (ry, rx): dy read through the taps of that phase, over the
 * grid of dx points ry + sh * u, rx + sw * v. */
static cg_gather gather_dy(const dnnk_conv_desc *d, int layout, const float *dy,
                           int ry, int rx) {
  cg_gather g;
  g.src = dy;
  g.t = tensor(layout, d->k, dnnk_conv_out_h(d), dnnk_conv_out_w(d));
  g.n = d->n;
  g.gu = (d->h - ry + d->stride_h - 1) / d->stride_h;
  g.gv = (d->w - rx + d->stride_w - 1) / d->stride_w;
  g.sy = g.sx = 1;
  g.nch = d->k;
  g.ty = phase_taps(ry, d->pad_h, d->kh, dil(d->dil_h), d->stride_h);
  g.tx = phase_taps(rx, d->pad_w, d->kw, dil(d->dil_w), d->stride_w);
  g.chan_last = layout == DNNK_NHWC;
  return g;
}

/* dx's points of phase (ry, rx) as the target of C's columns. */
static cg_scatter scatter_dx(const dnnk_conv_desc *d, int layout, float *dx,
                             int ry, int rx) {
  cg_scatter s;
  s.dst = dx;
  s.t = tensor(layout, d->c, d->h, d->w);
  s.ty = d->stride_h;
  s.tx = d->stride_w;
  s.oy = ry;
  s.ox = rx;
  return s;
}

/* The stride phases of dx some tap reaches, as gathers and scatters (at
 * most DNNK_CG_MAX_PHASES; 0 when there are more). */
static int phases(const dnnk_conv_desc *d, int layout, const float *dy,
                  float *dx, cg_gather *gs, cg_scatter *ss) {
  int np = 0;
  if ((long)d->stride_h * d->stride_w > DNNK_CG_MAX_PHASES)
    return 0;
  for (int ry = 0; ry < d->stride_h && ry < d->h; ++ry)
    for (int rx = 0; rx < d->stride_w && rx < d->w; ++rx) {
      cg_gather g = gather_dy(d, layout, dy, ry, rx);
      if (cg_rows(&g) == 0)
        continue;
      gs[np] = g;
      ss[np++] = scatter_dx(d, layout, dx, ry, rx);
    }
  return np;
}

/* Larger of two sizes. */
static inline size_t max_sz(size_t a, size_t b) { return a > b ? a : b; }

size_t dnnk_conv_workspace_fused(const dnnk_conv_desc *d, int layout,
                                 int threads) {
  dnnk_require_conv(d, "dnnk_conv_workspace_fused");
  if (threads <= 0)
    threads = omp_get_max_threads();
  if (layout == DNNK_NCHWC)
    return bk_workspace(d, threads);
  if (pw_applies(d, layout))
    return pw_workspace(d, threads);
  cg_gather gx = gather_x(d, layout, NULL);
  size_t need = max_sz(cg_wide_workspace(&gx, d->k, threads),
                       cg_deep_workspace(&gx, d->k, threads));
  for (int ry = 0; ry < d->stride_h && ry < d->h; ++ry)
    for (int rx = 0; rx < d->stride_w && rx < d->w; ++rx) {
      cg_gather g = gather_dy(d, layout, NULL, ry, rx);
      if (cg_rows(&g) > 0)
        need = max_sz(need, cg_wide_workspace(&g, d->c, threads));
    }
  cg_gather gs[DNNK_CG_MAX_PHASES];
  cg_scatter ss[DNNK_CG_MAX_PHASES];
  int np = phases(d, layout, NULL, NULL, gs, ss);
  if (np > 1)
    need = max_sz(need, cg_phases_workspace(gs, np, d->c, threads));
  if (c1_applies(d, layout))
    need = max_sz(need, c1_workspace(d, threads));
  if (c1_weights_applies(d, layout))
    need = max_sz(need, c1_weights_workspace(d, threads));
  return need;
}

size_t dnnk_conv_workspace(const dnnk_conv_desc *d) {
  dnnk_require_conv(d, "dnnk_conv_workspace");
  /* The im2col method's size, as before: thread-independent, so host and
   * device agree. The fused passes run in it with as many threads as fit
   * (on tiny layers where not even one fits, they allocate). */
  long p = (long)d->n * dnnk_conv_out_h(d) * dnnk_conv_out_w(d);
  return (size_t)((long)d->c * d->kh * d->kw + d->k) * p;
}

void dnnk_conv2d_forward_ex(const dnnk_conv_desc *d, int layout, const float *x,
                            const float *wt, const float *bias, float *y,
                            float *workspace, size_t ws_floats) {
  dnnk_require_conv(d, "dnnk_conv2d_forward");
  if (layout == DNNK_NCHWC) {
    bk_forward(d, x, wt, bias, y, workspace, ws_floats);
    return;
  }
  if (pw_applies(d, layout)) {
    pw_forward(d, x, wt, bias, y, workspace, ws_floats);
    return;
  }
  cg_gather g = gather_x(d, layout, x);
  cg_weights w = weights_fwd(d, wt);
  cg_scatter s = scatter_y(d, layout, y);
  cg_wide(&g, &w, d->k, &s, bias, workspace, ws_floats);
}

void dnnk_conv2d_backward_data_ex(const dnnk_conv_desc *d, int layout,
                                  const float *dy, const float *wt, float *dx,
                                  float *workspace, size_t ws_floats) {
  dnnk_require_conv(d, "dnnk_conv2d_backward_data");
  if (layout == DNNK_NCHWC) {
    bk_backward_data(d, dy, wt, dx, workspace, ws_floats);
    return;
  }
  if (pw_applies(d, layout)) {
    pw_backward_data(d, dy, wt, dx, workspace, ws_floats);
    return;
  }
  if (c1_applies(d, layout)) {
    c1_backward_data(d, dy, wt, dx, workspace, ws_floats);
    return;
  }
  /* A = W^T: rows input channels, columns (output channel, tap). */
  cg_weights w = {wt, (long)d->kh * d->kw, (long)d->c * d->kh * d->kw, d->kw,
                  1};
  /* Points no tap reaches (strides above the kernel span, such as 1x1
   * stride 2) are zero: clear dx at once rather than phase by phase. */
  int empty = 0;
  for (int ry = 0; ry < d->stride_h && ry < d->h; ++ry)
    for (int rx = 0; rx < d->stride_w && rx < d->w; ++rx) {
      cg_gather g = gather_dy(d, layout, dy, ry, rx);
      empty |= cg_rows(&g) == 0;
    }
  if (empty) {
    long per = (long)d->c * d->h * d->w;
#pragma omp parallel for schedule(static)
    for (int b = 0; b < d->n; ++b)
      memset(dx + b * per, 0, sizeof(float) * per);
  }
  /* Strided: every phase of an image from one padded copy of dy. */
  cg_gather gs[DNNK_CG_MAX_PHASES];
  cg_scatter ss[DNNK_CG_MAX_PHASES];
  int np = phases(d, layout, dy, dx, gs, ss);
  if (np > 1 && cg_wide_phases(gs, ss, np, &w, d->c, workspace, ws_floats))
    return;
  for (int ry = 0; ry < d->stride_h && ry < d->h; ++ry)
    for (int rx = 0; rx < d->stride_w && rx < d->w; ++rx) {
      cg_gather g = gather_dy(d, layout, dy, ry, rx);
      cg_scatter s = scatter_dx(d, layout, dx, ry, rx);
      if (cg_rows(&g) > 0)
        cg_wide(&g, &w, d->c, &s, NULL, workspace, ws_floats);
    }
}

void dnnk_conv2d_backward_weights_ex(const dnnk_conv_desc *d, int layout,
                                     const float *x, const float *dy,
                                     float *dwt, float *dbias, float *workspace,
                                     size_t ws_floats) {
  dnnk_require_conv(d, "dnnk_conv2d_backward_weights");
  if (layout == DNNK_NCHWC) {
    bk_backward_weights(d, x, dy, dwt, dbias, workspace, ws_floats);
    return;
  }
  if (pw_applies(d, layout)) {
    pw_backward_weights(d, x, dy, dwt, dbias, workspace, ws_floats);
    return;
  }
  if (c1_weights_applies(d, layout)) {
    c1_backward_weights(d, x, dy, dwt, dbias, workspace, ws_floats);
    return;
  }
  cg_gather g = gather_x(d, layout, x);
  cg_scatter s = scatter_y(d, layout, (float *)dy); /* read only */
  cg_weights w = weights_fwd(d, NULL);
  cg_deep(&g, &s, d->k, dwt, dbias, &w, workspace, ws_floats);
}

/* The size of a caller's workspace (0 for none). */
static size_t given(const dnnk_conv_desc *d, const float *ws) {
  /* An invalid layer is reported by the pass, under its own name. */
  return ws && !dnnk_conv_check(d) ? dnnk_conv_workspace(d) : 0;
}

void dnnk_conv2d_forward(const dnnk_conv_desc *d, const float *x,
                         const float *wt, const float *bias, float *y,
                         float *workspace) {
  dnnk_conv2d_forward_ex(d, DNNK_NCHW, x, wt, bias, y, workspace,
                         given(d, workspace));
}

void dnnk_conv2d_backward_data(const dnnk_conv_desc *d, const float *dy,
                               const float *wt, float *dx, float *workspace) {
  dnnk_conv2d_backward_data_ex(d, DNNK_NCHW, dy, wt, dx, workspace,
                               given(d, workspace));
}

void dnnk_conv2d_backward_weights(const dnnk_conv_desc *d, const float *x,
                                  const float *dy, float *dwt, float *dbias,
                                  float *workspace) {
  dnnk_conv2d_backward_weights_ex(d, DNNK_NCHW, x, dy, dwt, dbias, workspace,
                                  given(d, workspace));
}

#pragma omp end declare target
