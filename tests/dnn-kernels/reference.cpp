// Reference implementations: direct loops over the definitions.
#include "reference.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ref {

void gemm(int ta, int tb, int m, int n, int k, float alpha, const float *a,
          int lda, const float *b, int ldb, float beta, float *c, int ldc) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0.0;
      for (int p = 0; p < k; ++p) {
        double av = ta ? a[p * lda + i] : a[i * lda + p];
        double bv = tb ? b[j * ldb + p] : b[p * ldb + j];
        s += av * bv;
      }
      double prev = beta == 0.0f ? 0.0 : (double)beta * c[i * ldc + j];
      c[i * ldc + j] = (float)(alpha * s + prev);
    }
}

// Output height and width of a convolution descriptor.
static void out_dims(const dnnk_conv_desc &d, int &oh, int &ow) {
  oh = (d.h + 2 * d.pad_h - d.kh) / d.stride_h + 1;
  ow = (d.w + 2 * d.pad_w - d.kw) / d.stride_w + 1;
}

void conv_forward(const dnnk_conv_desc &d, const float *x, const float *w,
                  const float *bias, float *y) {
  int oh, ow;
  out_dims(d, oh, ow);
  for (int b = 0; b < d.n; ++b)
    for (int k = 0; k < d.k; ++k)
      for (int oy = 0; oy < oh; ++oy)
        for (int ox = 0; ox < ow; ++ox) {
          double s = bias ? bias[k] : 0.0;
          for (int c = 0; c < d.c; ++c)
            for (int i = 0; i < d.kh; ++i)
              for (int j = 0; j < d.kw; ++j) {
                int yy = oy * d.stride_h - d.pad_h + i;
                int xx = ox * d.stride_w - d.pad_w + j;
                if (yy < 0 || yy >= d.h || xx < 0 || xx >= d.w)
                  continue;
                s += (double)x[((b * d.c + c) * d.h + yy) * d.w + xx] *
                     w[((k * d.c + c) * d.kh + i) * d.kw + j];
              }
          y[((b * d.k + k) * oh + oy) * ow + ox] = (float)s;
        }
}

void conv_backward_data(const dnnk_conv_desc &d, const float *dy,
                        const float *w, float *dx) {
  int oh, ow;
  out_dims(d, oh, ow);
  std::vector<double> acc((size_t)d.n * d.c * d.h * d.w, 0.0);
  for (int b = 0; b < d.n; ++b)
    for (int k = 0; k < d.k; ++k)
      for (int oy = 0; oy < oh; ++oy)
        for (int ox = 0; ox < ow; ++ox) {
          double g = dy[((b * d.k + k) * oh + oy) * ow + ox];
          for (int c = 0; c < d.c; ++c)
            for (int i = 0; i < d.kh; ++i)
              for (int j = 0; j < d.kw; ++j) {
                int yy = oy * d.stride_h - d.pad_h + i;
                int xx = ox * d.stride_w - d.pad_w + j;
                if (yy < 0 || yy >= d.h || xx < 0 || xx >= d.w)
                  continue;
                acc[((b * d.c + c) * d.h + yy) * d.w + xx] +=
                    g * w[((k * d.c + c) * d.kh + i) * d.kw + j];
              }
        }
  for (size_t i = 0; i < acc.size(); ++i)
    dx[i] = (float)acc[i];
}

void conv_backward_weights(const dnnk_conv_desc &d, const float *x,
                           const float *dy, float *dw, float *db) {
  int oh, ow;
  out_dims(d, oh, ow);
  for (int k = 0; k < d.k; ++k) {
    for (int c = 0; c < d.c; ++c)
      for (int i = 0; i < d.kh; ++i)
        for (int j = 0; j < d.kw; ++j) {
          double s = 0.0;
          for (int b = 0; b < d.n; ++b)
            for (int oy = 0; oy < oh; ++oy)
              for (int ox = 0; ox < ow; ++ox) {
                int yy = oy * d.stride_h - d.pad_h + i;
                int xx = ox * d.stride_w - d.pad_w + j;
                if (yy < 0 || yy >= d.h || xx < 0 || xx >= d.w)
                  continue;
                s += (double)dy[((b * d.k + k) * oh + oy) * ow + ox] *
                     x[((b * d.c + c) * d.h + yy) * d.w + xx];
              }
          dw[((k * d.c + c) * d.kh + i) * d.kw + j] = (float)s;
        }
    if (db) {
      double s = 0.0;
      for (int b = 0; b < d.n; ++b)
        for (int p = 0; p < oh * ow; ++p)
          s += dy[(b * d.k + k) * oh * ow + p];
      db[k] = (float)s;
    }
  }
}

void maxpool_forward(const dnnk_pool_desc &d, const float *x, float *y,
                     int32_t *argmax) {
  int oh = (d.h + 2 * d.pad_h - d.kh) / d.stride_h + 1;
  int ow = (d.w + 2 * d.pad_w - d.kw) / d.stride_w + 1;
  for (int pl = 0; pl < d.n * d.c; ++pl)
    for (int oy = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox) {
        float best = -std::numeric_limits<float>::infinity();
        int where = -1;
        for (int i = 0; i < d.kh; ++i)
          for (int j = 0; j < d.kw; ++j) {
            int yy = oy * d.stride_h - d.pad_h + i;
            int xx = ox * d.stride_w - d.pad_w + j;
            if (yy < 0 || yy >= d.h || xx < 0 || xx >= d.w)
              continue;
            float v = x[(size_t)pl * d.h * d.w + yy * d.w + xx];
            if (where < 0 || v > best) {
              best = v;
              where = yy * d.w + xx;
            }
          }
        y[(size_t)pl * oh * ow + oy * ow + ox] = best;
        argmax[(size_t)pl * oh * ow + oy * ow + ox] = where;
      }
}

void jacobi_global(int ny, int nx, const std::vector<float> &in,
                   std::vector<float> &out) {
  int ld = nx + 2;
  out = in;
  for (int y = 1; y <= ny; ++y)
    for (int x = 1; x <= nx; ++x)
      out[y * ld + x] = 0.25f * ((in[(y - 1) * ld + x] + in[(y + 1) * ld + x]) +
                                 (in[y * ld + x - 1] + in[y * ld + x + 1]));
}

} // namespace ref

std::vector<float> random_floats(size_t count, unsigned seed, float lo,
                                 float hi) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(count);
  for (auto &x : v)
    x = dist(gen);
  return v;
}

double max_rel_diff(const float *a, const float *b, size_t count) {
  double worst = 0.0;
  for (size_t i = 0; i < count; ++i) {
    double d = std::fabs((double)a[i] - b[i]) / (1.0 + std::fabs((double)b[i]));
    if (!(d <= worst)) // also catches NaN
      worst = std::isnan(d) ? INFINITY : d;
  }
  return worst;
}
