/* The heavier augmentation: random resized crop, rotation and flip as one
 * bilinear warp, then per-channel gain, contrast, saturation and
 * brightness. The rule of augment.c holds: the same bytes on every ISA,
 * thread count and batch split (Philox draws per image, a fixed order of
 * float operations without FMA contraction, no float reductions, and no
 * libm function whose last bit may differ between ISAs: exp, log, sin and
 * cos are computed here from basic operations). */
#include <math.h>
#include <stdlib.h>

#include "alloc.h"
#include "augment_internal.h"

#pragma STDC FP_CONTRACT OFF

#pragma omp declare target

/* Random choices of one image: the warp output pixel -> source pixel, and
 * the colour changes. */
typedef struct warp_draw {
  aug_draw base; /* crop offsets, flip, brightness, contrast */
  float cx, cy;  /* centre of the output */
  float cs, sn;  /* cosine and sine of the rotation */
  float kx, ky;  /* box size over output size */
  float x0, y0;  /* box origin in image pixels, minus half a pixel */
  float gain[DNNK_AUG_MAX_CHANNELS];
  float sat; /* saturation factor */
  int warp, use_color, use_sat;
} warp_draw;

/* ln 2, for the range reductions. */
#define LN2 0.69314718055994530942

/* exp(x) by range reduction and a Taylor series. */
static double det_exp(double x) {
  double k = floor(x / LN2 + 0.5), r = x - k * LN2, term = 1.0, sum = 1.0;
  for (int i = 1; i < 22; ++i) {
    term = term * r / (double)i;
    sum = sum + term;
  }
  return ldexp(sum, (int)k);
}

/* log(x), x > 0: the exponent, and 2 atanh((m - 1) / (m + 1)) of the
 * mantissa m in [0.5, 1). */
static double det_log(double x) {
  int e;
  double m = frexp(x, &e), y = (m - 1.0) / (m + 1.0), y2 = y * y;
  double term = y, sum = 0.0;
  for (int i = 1; i < 80; i += 2) {
    sum = sum + term / (double)i;
    term = term * y2;
  }
  return 2.0 * sum + (double)e * LN2;
}

/* Sine and cosine of an angle in degrees: quadrant, then Taylor series on
 * the remainder (|r| <= pi/4). Multiples of 90 degrees are exact. */
static void det_sincos_deg(double deg, float *s, float *c) {
  double q = floor(deg / 90.0 + 0.5);
  double r = (deg - q * 90.0) * (3.14159265358979323846 / 180.0), r2 = r * r;
  double sr = r, cr = 1.0, ts = r, tc = 1.0;
  for (int i = 1; i < 10; ++i) {
    ts = -ts * r2 / (double)((2 * i) * (2 * i + 1));
    tc = -tc * r2 / (double)((2 * i - 1) * (2 * i));
    sr = sr + ts;
    cr = cr + tc;
  }
  long k = (long)q % 4;
  k = k < 0 ? k + 4 : k;
  double sv = k == 0 ? sr : k == 1 ? cr : k == 2 ? -sr : -cr;
  double cv = k == 0 ? cr : k == 1 ? -sr : k == 2 ? -cr : sr;
  *s = (float)sv;
  *c = (float)cv;
}

/* Uniform double in [lo, hi) from 24 random bits. */
static double in_range(uint32_t u, float lo, float hi) {
  return (double)lo + (double)uniform01(u) * ((double)hi - (double)lo);
}

/* The box of the resized crop in the padded image (torchvision's
 * RandomResizedCrop, clamped instead of retried), or the plain crop's. */
static void draw_box(const dnnk_augment_params *p, const aug_draw *d, int h,
                     int w, const uint32_t t[4], int box[4]) {
  int ph = h + 2 * p->pad, pw = w + 2 * p->pad;
  if (!(p->scale[1] > 0.0f)) {
    box[0] = d->off_y, box[1] = d->off_x, box[2] = p->out_h, box[3] = p->out_w;
    return;
  }
  double area = (double)ph * pw * in_range(t[0], p->scale[0], p->scale[1]);
  double r0 = p->ratio[0] > 0.0f ? p->ratio[0] : 1.0;
  double r1 = p->ratio[1] > 0.0f ? p->ratio[1] : r0;
  double aspect =
      r0 == r1 ? r0 : r0 * det_exp((double)uniform01(t[1]) * det_log(r1 / r0));
  int bh = (int)floor(sqrt(area / aspect) + 0.5);
  int bw = (int)floor(sqrt(area * aspect) + 0.5);
  bh = bh < 1 ? 1 : bh > ph ? ph : bh;
  bw = bw < 1 ? 1 : bw > pw ? pw : bw;
  box[0] = uniform_int(t[2], ph - bh + 1);
  box[1] = uniform_int(t[3], pw - bw + 1);
  box[2] = bh, box[3] = bw;
}

/* Draws everything image index idx needs. */
static warp_draw draw_warp(const dnnk_augment_params *p, const uint8_t *img,
                           int c, int h, int w, long idx) {
  warp_draw d;
  uint32_t t[4], q[4], g[4];
  d.base = dnnk_aug_draw(p, img, c, h, w, idx);
  aug_block(p, idx, 2, t);
  aug_block(p, idx, 3, q);
  aug_block(p, idx, 4, g);
  d.warp = p->scale[1] > 0.0f || p->degrees[0] != 0.0f || p->degrees[1] != 0.0f;
  int box[4];
  draw_box(p, &d.base, h, w, t, box);
  d.cx = (float)(p->out_w - 1) * 0.5f;
  d.cy = (float)(p->out_h - 1) * 0.5f;
  d.sn = 0.0f, d.cs = 1.0f;
  if (p->degrees[0] != 0.0f || p->degrees[1] != 0.0f)
    det_sincos_deg(in_range(q[0], p->degrees[0], p->degrees[1]), &d.sn, &d.cs);
  d.ky = (float)box[2] / (float)p->out_h;
  d.kx = (float)box[3] / (float)p->out_w;
  d.y0 = (float)(box[0] - p->pad) - 0.5f;
  d.x0 = (float)(box[1] - p->pad) - 0.5f;
  d.use_color = p->color != 0.0f;
  for (int i = 0; i < DNNK_AUG_MAX_CHANNELS; ++i)
    d.gain[i] = 1.0f + uniform_pm1(g[i]) * p->color;
  d.use_sat = c == 3 && (p->saturation[0] != 0.0f || p->saturation[1] != 0.0f);
  d.sat = (float)(1.0 + in_range(q[1], p->saturation[0], p->saturation[1]));
  return d;
}

/* Pixel (y, x) of channel ci, or fill outside the image. */
static inline float pixel(const uint8_t *img, int layout, int c, int h, int w,
                          int ci, int y, int x, float fill) {
  if (y < 0 || y >= h || x < 0 || x >= w)
    return fill;
  return (float)(layout == DNNK_NHWC ? img[((long)y * w + x) * c + ci]
                                     : img[((long)ci * h + y) * w + x]);
}

/* Output row oy of every channel through the warp: un-flip, rotate about
 * the output's centre, scale into the box, sample bilinearly. */
static void warp_row(const dnnk_augment_params *p, const warp_draw *d,
                     const uint8_t *img, int layout, int c, int h, int w,
                     int oy, float *const *rows) {
  float dy = (float)oy - d->cy, fill = p->fill;
  for (int ox = 0; ox < p->out_w; ++ox) {
    float dx = (float)(d->base.flip ? p->out_w - 1 - ox : ox) - d->cx;
    float u = d->cx + (d->cs * dx - d->sn * dy);
    float v = d->cy + (d->sn * dx + d->cs * dy);
    float sx = (u + 0.5f) * d->kx + d->x0, sy = (v + 0.5f) * d->ky + d->y0;
    float fx = floorf(sx), fy = floorf(sy), ax = sx - fx, ay = sy - fy;
    int ix = (int)fx, iy = (int)fy;
    for (int ci = 0; ci < c; ++ci) {
      float p00 = pixel(img, layout, c, h, w, ci, iy, ix, fill);
      float p01 = pixel(img, layout, c, h, w, ci, iy, ix + 1, fill);
      float p10 = pixel(img, layout, c, h, w, ci, iy + 1, ix, fill);
      float p11 = pixel(img, layout, c, h, w, ci, iy + 1, ix + 1, fill);
      float top = p00 * (1.0f - ax) + p01 * ax;
      float bottom = p10 * (1.0f - ax) + p11 * ax;
      rows[ci][ox] = top * (1.0f - ay) + bottom * ay;
    }
  }
}

/* Colour, clamp and normalisation of a row of every channel, in place. */
static void colour_row(const warp_draw *d, int c, int n, const float *scale,
                       const float *shift, float *const *rows) {
  const aug_draw *b = &d->base;
  for (int i = 0; i < n; ++i) {
    float v[DNNK_AUG_MAX_CHANNELS];
    for (int ci = 0; ci < c; ++ci) {
      v[ci] = rows[ci][i];
      if (d->use_color)
        v[ci] = v[ci] * d->gain[ci];
      if (b->use_gain)
        v[ci] = (v[ci] - b->mean) * b->gain + b->mean;
    }
    if (d->use_sat) {
      float grey = (0.299f * v[0] + 0.587f * v[1]) + 0.114f * v[2];
      for (int ci = 0; ci < 3; ++ci)
        v[ci] = (v[ci] - grey) * d->sat + grey;
    }
    for (int ci = 0; ci < c; ++ci) {
      float x = b->use_add ? v[ci] + b->add : v[ci];
      x = x < 0.0f ? 0.0f : x;
      x = x > 255.0f ? 255.0f : x;
      rows[ci][i] = (x * (1.0f / 255.0f) - shift[ci]) * scale[ci];
    }
  }
}

int dnnk_aug_is_full(const dnnk_augment_params *p) {
  return p->scale[1] > 0.0f || p->degrees[0] != 0.0f || p->degrees[1] != 0.0f ||
         p->color != 0.0f || p->saturation[0] != 0.0f ||
         p->saturation[1] != 0.0f;
}

void dnnk_aug_full_batch(const dnnk_augment_params *p, const uint8_t *in,
                         int layout, int n, int c, int h, int w,
                         long first_index, float *out) {
  long in_size = (long)c * h * w, out_plane = (long)p->out_h * p->out_w;
  float scale[DNNK_AUG_MAX_CHANNELS], shift[DNNK_AUG_MAX_CHANNELS];
  for (int ci = 0; ci < c; ++ci)
    scale[ci] = 1.0f / p->std[ci], shift[ci] = p->mean[ci];
  warp_draw *draws =
      (warp_draw *)dnnk_alloc(sizeof(warp_draw) * n, "augment: draws");
#pragma omp parallel for schedule(static)
  for (int b = 0; b < n; ++b)
    draws[b] = draw_warp(p, in + b * in_size, c, h, w, first_index + b);
    /* Rows of all channels together: the warp's coordinates and the
     * saturation's grey are per pixel, across channels. */
#pragma omp parallel for collapse(2) schedule(static)
  for (int b = 0; b < n; ++b)
    for (int oy = 0; oy < p->out_h; ++oy) {
      const uint8_t *img = in + b * in_size;
      float *rows[DNNK_AUG_MAX_CHANNELS];
      for (int ci = 0; ci < c; ++ci)
        rows[ci] = out + ((long)b * c + ci) * out_plane + (long)oy * p->out_w;
      if (draws[b].warp)
        warp_row(p, &draws[b], img, layout, c, h, w, oy, rows);
      else
        for (int ci = 0; ci < c; ++ci)
          dnnk_aug_gather_row(p, &draws[b].base, img, layout, c, h, w, ci, oy,
                              rows[ci]);
      colour_row(&draws[b], c, p->out_w, scale, shift, rows);
    }
  free(draws);
}

#pragma omp end declare target
