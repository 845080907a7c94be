/* Fitting a data set to a model's input: bilinear resizing with half-pixel
 * centres (PyTorch's interpolate, align_corners=False) and grey replicated
 * to every channel, once, on the host, when the data is loaded. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dnnt_data.h"

#pragma STDC FP_CONTRACT OFF

/* Source row or column and weight of the next one for output index o of n
 * from in: half-pixel centres, clamped at the edges as PyTorch does. */
static void source(int o, int n, int in, int *i0, float *a) {
  float s = ((float)o + 0.5f) * ((float)in / (float)n) - 0.5f;
  s = s < 0.0f ? 0.0f : s;
  int i = (int)s;
  *i0 = i >= in - 1 ? in - 1 : i;
  *a = i >= in - 1 ? 0.0f : s - (float)i;
}

/* One h x w plane from an ih x iw plane. */
static void resize_plane(const uint8_t *in, int ih, int iw, uint8_t *out, int h,
                         int w) {
  for (int y = 0; y < h; ++y) {
    int y0;
    float ay;
    source(y, h, ih, &y0, &ay);
    int y1 = y0 + (ay > 0.0f);
    for (int x = 0; x < w; ++x) {
      int x0;
      float ax;
      source(x, w, iw, &x0, &ax);
      int x1 = x0 + (ax > 0.0f);
      float top = in[y0 * iw + x0] * (1.0f - ax) + in[y0 * iw + x1] * ax;
      float bot = in[y1 * iw + x0] * (1.0f - ax) + in[y1 * iw + x1] * ax;
      float v = top * (1.0f - ay) + bot * ay;
      out[y * w + x] = (uint8_t)floorf(v + 0.5f);
    }
  }
}

int dnnt_dataset_fit(dnnt_dataset *d, int c, int h, int w) {
  if (d->c == c && d->h == h && d->w == w)
    return 0;
  if (d->c != 1 && d->c != c)
    return -1;
  long in_img = (long)d->c * d->h * d->w, out_img = (long)c * h * w;
  uint8_t *out = (uint8_t *)malloc((size_t)(d->count * out_img));
  if (!out)
    return -1;
  for (long i = 0; i < d->count; ++i)
    for (int ch = 0; ch < c; ++ch) {
      const uint8_t *src = d->images + i * in_img;
      uint8_t *dst = out + i * out_img + (long)ch * h * w;
      if (ch > 0 && d->c == 1)
        memcpy(dst, dst - (long)h * w, (size_t)h * w); /* grey replicated */
      else
        resize_plane(src + (long)ch * d->h * d->w, d->h, d->w, dst, h, w);
    }
  free(d->images);
  d->images = out;
  d->c = c, d->h = h, d->w = w;
  return 0;
}
