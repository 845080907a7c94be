/* dnnk: DNN-training kernels written as plain OpenMP.
 *
 * Every routine runs on the host and, unchanged, inside `#pragma omp target`
 * regions (the declarations below are `declare target`), so the same source
 * serves the host, LLVM's host offload plugin and a BlueField DPU reached
 * through ompdpu. All arrays are row-major / NCHW float32 unless stated, all
 * sizes are in elements, and no routine keeps state between calls.
 *
 * Routines that need scratch memory take a `workspace` pointer sized by the
 * matching *_workspace() function; passing NULL makes them allocate it
 * (malloc works on the host and on CPU offload targets alike). */
#ifndef DNNK_H
#define DNNK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Visible to device compilation passes, so target regions may call them
 * (guarded: plain C/C++ consumers without -fopenmp see no pragma). */
#ifdef _OPENMP
#pragma omp declare target
#endif

/* ---------------------------------------------------------------- GEMM -- */

/* Operand transposition flags for dnnk_sgemm. */
enum dnnk_trans { DNNK_NO_TRANS = 0, DNNK_TRANS = 1 };

/* C = alpha * op(A) * op(B) + beta * C, row-major; op(A) is m x k, op(B) is
 * k x n. With beta == 0, C is not read (as in BLAS). Parallel over blocks.
 * Arguments out of range (a negative size, a leading dimension below its
 * row length, a flag that is not a dnnk_trans) stop the program with
 * "dnnk error: dnnk_sgemm: ...", as BLAS's xerbla does. */
void dnnk_sgemm(int trans_a, int trans_b, int m, int n, int k, float alpha,
                const float *a, int lda, const float *b, int ldb, float beta,
                float *c, int ldc);

/* -------------------------------------------------------- convolution -- */

/* Activation layouts: convolutions (the *_ex passes) and augmentation input
 * (augmentation output is always NCHW). DNNK_NCHWC (convolutions only) is
 * the blocked channel layout: n x ceil(c / B) x h x w x B, B =
 * dnnk_channel_block() channels per block (16 on AVX-512, 8 on AVX2, 4 on
 * NEON and SSE: the build's vector), lanes past c zero. B depends on the
 * ISA the code was compiled for, so convert where the passes run (an
 * offload device's B may differ from the host's). */
enum dnnk_layout { DNNK_NCHW = 0, DNNK_NHWC = 1, DNNK_NCHWC = 2 };

/* Channels per block of DNNK_NCHWC in this build. */
int dnnk_channel_block(void);
/* Floats of an n x c x h x w tensor in DNNK_NCHWC (c rounded up to B). */
size_t dnnk_blocked_size(int n, int c, int h, int w);
/* NCHW -> DNNK_NCHWC (padding lanes zeroed), and back. Parallel. */
void dnnk_to_blocked(const float *x, int n, int c, int h, int w, float *xb);
void dnnk_from_blocked(const float *xb, int n, int c, int h, int w, float *x);

/* Shape of a 2D convolution layer: NCHW input, KCRS (OIHW) weights. */
typedef struct dnnk_conv_desc {
  int n, c, h, w;         /* batch, input channels, input height and width */
  int k;                  /* output channels */
  int kh, kw;             /* kernel height and width */
  int stride_h, stride_w; /* strides (>= 1) */
  int pad_h, pad_w;       /* zero padding on each side */
  int dil_h, dil_w;       /* dilation; 0 (left out of an initialiser) = 1 */
} dnnk_conv_desc;

/* NULL when d is a layer the passes take, else what is wrong with it ("the
 * kernel is wider than the padded input", ...): every size at least 1,
 * strides at least 1, padding and dilation not negative, the dilated kernel
 * within the padded input, and the tensors' and column matrix's element
 * counts below 2^31. Every pass, workspace query, im2col and col2im checks
 * its layer and stops the program with "dnnk error: ..." when it is not. */
const char *dnnk_conv_check(const dnnk_conv_desc *d);
/* Output height, (h + 2 pad_h - dil_h (kh - 1) - 1) / stride_h + 1; 0 when
 * the stride is below 1 or the dilated kernel exceeds the padded input. */
int dnnk_conv_out_h(const dnnk_conv_desc *d);
/* Output width, (w + 2 pad_w - dil_w (kw - 1) - 1) / stride_w + 1; 0 as
 * dnnk_conv_out_h. */
int dnnk_conv_out_w(const dnnk_conv_desc *d);
/* Floats of scratch for any of the three convolution passes, at any thread
 * count: the im2col column matrix plus a k x P matrix, as before convGemm
 * (the fused passes use a part of it; on tiny layers they may allocate). */
size_t dnnk_conv_workspace(const dnnk_conv_desc *d);
/* Floats the fused (convGemm) passes need with up to threads threads
 * (<= 0: omp_get_max_threads()) for activations in layout; far less than
 * dnnk_conv_workspace. */
size_t dnnk_conv_workspace_fused(const dnnk_conv_desc *d, int layout,
                                 int threads);

/* Lowers one CHW image to columns: col is (c*kh*kw) x (oh*ow), row-major,
 * with row stride ldcol >= oh*ow (so a batch can share one matrix). */
void dnnk_im2col(const float *x, int c, int h, int w, int kh, int kw, int sh,
                 int sw, int ph, int pw, float *col, long ldcol);
/* Adjoint of dnnk_im2col: sums columns back into a CHW image (x is
 * overwritten, not accumulated into). */
void dnnk_col2im(const float *col, long ldcol, int c, int h, int w, int kh,
                 int kw, int sh, int sw, int ph, int pw, float *x);

/* y = conv(x, wt) + bias (bias may be NULL); y is n x k x oh x ow.
 * dnnk_conv2d_forward_ex on NCHW (convGemm). */
void dnnk_conv2d_forward(const dnnk_conv_desc *d, const float *x,
                         const float *wt, const float *bias, float *y,
                         float *workspace);
/* dx = gradient of the input given dy (dnnk_conv2d_backward_data_ex). */
void dnnk_conv2d_backward_data(const dnnk_conv_desc *d, const float *dy,
                               const float *wt, float *dx, float *workspace);
/* dwt (k x c x kh x kw) and dbias (k, may be NULL) given x and dy
 * (dnnk_conv2d_backward_weights_ex). Overwrites, not accumulates. */
void dnnk_conv2d_backward_weights(const dnnk_conv_desc *d, const float *x,
                                  const float *dy, float *dwt, float *dbias,
                                  float *workspace);

/* The three passes in any layout (x, y, dy, dx NCHW, NHWC or NCHWC; weights
 * always KCRS), with the workspace's size in floats: they use as many
 * threads as it has room for (NULL or too small: malloc). NCHW and NHWC are
 * convGemm: the GEMM's packed operands are gathered from the tensors, no
 * column matrix. NCHWC runs direct convolutions over channel blocks
 * (src/convblk.c); its outputs' padding lanes are written as zeros. */
void dnnk_conv2d_forward_ex(const dnnk_conv_desc *d, int layout, const float *x,
                            const float *wt, const float *bias, float *y,
                            float *workspace, size_t ws_floats);
/* dx given dy, as a stride-1 correlation of dy per stride phase of dx
 * (no col2im): each dx point is written once, by one thread. */
void dnnk_conv2d_backward_data_ex(const dnnk_conv_desc *d, int layout,
                                  const float *dy, const float *wt, float *dx,
                                  float *workspace, size_t ws_floats);
/* dwt and dbias (may be NULL) given x and dy; overwrites. */
void dnnk_conv2d_backward_weights_ex(const dnnk_conv_desc *d, int layout,
                                     const float *x, const float *dy,
                                     float *dwt, float *dbias, float *workspace,
                                     size_t ws_floats);

/* ------------------------------------------------ elementwise layers -- */

/* y[n][c][i] = x[n][c][i] + bias[c] over n x c x hw (in place allowed). */
void dnnk_bias_forward(const float *x, const float *bias, int n, int c, int hw,
                       float *y);
/* dbias[c] = sum over n and i of dy[n][c][i] (overwrites dbias). */
void dnnk_bias_backward(const float *dy, int n, int c, int hw, float *dbias);
/* y = max(x, 0) over count elements (in place allowed). */
void dnnk_relu_forward(const float *x, long count, float *y);
/* dx = dy where the forward input (or output) x > 0, else 0. */
void dnnk_relu_backward(const float *x, const float *dy, long count, float *dx);

/* ----------------------------------------------------- max-pooling -- */

/* Shape of a max-pooling layer over NCHW (padding counts as -infinity). */
typedef struct dnnk_pool_desc {
  int n, c, h, w;         /* input batch, channels, height, width */
  int kh, kw;             /* window */
  int stride_h, stride_w; /* strides */
  int pad_h, pad_w;       /* padding on each side */
} dnnk_pool_desc;

/* Output height of the pooling layer. */
int dnnk_pool_out_h(const dnnk_pool_desc *d);
/* Output width of the pooling layer. */
int dnnk_pool_out_w(const dnnk_pool_desc *d);
/* y = window maxima; argmax (may be NULL) receives the index within the
 * input plane (h * w) of each maximum, first one on ties. */
void dnnk_maxpool_forward(const dnnk_pool_desc *d, const float *x, float *y,
                          int32_t *argmax);
/* dx = dy routed to the argmax positions (dx overwritten; overlapping
 * windows add up). */
void dnnk_maxpool_backward(const dnnk_pool_desc *d, const float *dy,
                           const int32_t *argmax, float *dx);

/* ------------------------------------------------- fully connected -- */

/* y (n x out) = x (n x in) * wt^T + bias, wt is out x in (bias may be NULL). */
void dnnk_fc_forward(const float *x, const float *wt, const float *bias, int n,
                     int in, int out, float *y);
/* dx (n x in) = dy * wt; dwt = dy^T * x; dbias = column sums of dy. Any of
 * dx, dwt, dbias may be NULL to skip it. Overwrites. */
void dnnk_fc_backward(const float *x, const float *wt, const float *dy, int n,
                      int in, int out, float *dx, float *dwt, float *dbias);

/* ------------------------------------------ softmax + cross-entropy -- */

/* prob = softmax of each row of logits (n x classes); returns the mean
 * cross-entropy against integer labels. */
float dnnk_softmax_xent_forward(const float *logits, const int32_t *labels,
                                int n, int classes, float *prob);
/* dlogits = (prob - onehot(labels)) / n, the gradient of the mean loss. */
void dnnk_softmax_xent_backward(const float *prob, const int32_t *labels, int n,
                                int classes, float *dlogits);

/* ------------------------------------------------------ augmentation -- */

/* Maximum channels dnnk_augment_params can normalise. */
#define DNNK_AUG_MAX_CHANNELS 4

/* What dnnk_augment_batch does to each image, and with which randomness. */
typedef struct dnnk_augment_params {
  uint64_t seed;    /* stream of the run */
  uint32_t epoch;   /* with the image index, the counter of the draws */
  int pad;          /* zero padding before the random crop (0: none) */
  int out_h, out_w; /* crop size (<= h + 2 pad, w + 2 pad) */
  int flip;         /* nonzero: flip horizontally with probability 1/2 */
  float brightness; /* add U(-b, b) * 255 to every pixel (0: off) */
  float contrast;   /* scale around the image mean by U(1-c, 1+c) (0: off) */
  float mean[DNNK_AUG_MAX_CHANNELS]; /* per channel, on the [0,1] scale */
  float std[DNNK_AUG_MAX_CHANNELS];  /* per channel, nonzero */
  /* Random resized crop, on when scale[1] > 0: a box of U(scale) of the
   * padded image's area, aspect w/h log-uniform in ratio ({0, 0}: 1),
   * clamped to the padded image, resampled bilinearly to out_h x out_w. */
  float scale[2];
  float ratio[2];
  float degrees[2];    /* rotate by U(degrees) counter-clockwise ({0,0}: off) */
  float fill;          /* pixel value (0-255) outside the image when warping */
  float color;         /* gain U(1-k, 1+k) drawn per channel (0: off) */
  float saturation[2]; /* 3 channels: away from grey by 1 + U(s) ({0,0}: off) */
} dnnk_augment_params;

/* Fills p with no augmentation: no crop/flip/jitter/warp/colour, mean 0,
 * std 1, crop size h x w. */
void dnnk_augment_defaults(dnnk_augment_params *p, int h, int w);
/* Augments n uint8 images (c <= 4 channels, h x w, layout as given) into
 * n x c x out_h x out_w floats. Image i uses the random draws of image index
 * first_index + i, so any split of a batch (host / DPU) gives the same
 * bytes as the whole. Bit-identical on every ISA: integer image statistics,
 * no FMA contraction, no reductions in float, no libm but exact functions
 * (floor, sqrt, frexp, ldexp).
 * Per pixel, in this order: crop (with pad; or the resized crop, rotation
 * about the output's centre and flip as one bilinear warp), channel gain,
 * contrast around the image mean, saturation (luma weights 0.299, 0.587,
 * 0.114), brightness, clamp to [0, 255], normalisation. */
void dnnk_augment_batch(const dnnk_augment_params *p, const uint8_t *in,
                        int layout, int n, int c, int h, int w,
                        long first_index, float *out);
/* Counter-based random number: Philox4x32-10 of (epoch, index, draw) under
 * key seed; word selects one of the four outputs (0..3). */
uint32_t dnnk_philox(uint64_t seed, uint32_t epoch, uint64_t index,
                     uint32_t draw, int word);
/* The raw Philox4x32-10 block function under a 64-bit key (low word is key
 * word 0), for known-answer tests against Random123. */
void dnnk_philox_block(const uint32_t ctr[4], uint64_t key, uint32_t out[4]);

/* ---------------------------------------------------- halo exchange -- */

/* A tile of a 2D grid: ny x nx interior points surrounded by halo ghost
 * rows/columns on each side; stored row-major with row stride nx + 2 halo. */
typedef struct dnnk_tile {
  int ny, nx; /* interior rows and columns */
  int halo;   /* ghost width w (>= 1) */
} dnnk_tile;

/* Sides of a tile, for packing and unpacking borders. */
enum dnnk_side { DNNK_NORTH = 0, DNNK_SOUTH = 1, DNNK_WEST = 2, DNNK_EAST = 3 };

/* Row stride (elements) of a tile's storage. */
int dnnk_tile_ld(const dnnk_tile *t);
/* Elements of a tile's storage, (ny + 2 halo) * (nx + 2 halo). */
long dnnk_tile_size(const dnnk_tile *t);
/* Elements in the border strip of one side: halo * nx for north/south (or
 * halo * (nx + 2 halo) with corners), halo * ny for west/east. */
long dnnk_halo_count(const dnnk_tile *t, int side, int corners);
/* Copies the halo-wide strip of interior points next to side into buf (what
 * the neighbour on that side needs). With corners, north/south strips span
 * the ghost columns too: pack them after west/east have been unpacked and
 * the corners travel in a second phase without diagonal messages. */
void dnnk_halo_pack(const dnnk_tile *t, const float *grid, int side,
                    int corners, float *buf);
/* Writes buf (as packed by the neighbour on side) into the ghost strip. */
void dnnk_halo_unpack(const dnnk_tile *t, float *grid, int side, int corners,
                      const float *buf);
/* 5-point Jacobi sweep, out = mean of the four neighbours in in, over the
 * interior rectangle rows [y0, y1) x columns [x0, x1) (interior coordinates,
 * 0-based; reads one point beyond it). */
void dnnk_jacobi_region(const dnnk_tile *t, const float *in, float *out, int y0,
                        int y1, int x0, int x1);
/* Sweep of the points that read no ghost cell (rows/columns 1..n-2): runs
 * while the halo exchange is in flight. */
void dnnk_jacobi_inner(const dnnk_tile *t, const float *in, float *out);
/* Sweep of the one-point frame the inner sweep leaves: after the exchange. */
void dnnk_jacobi_frame(const dnnk_tile *t, const float *in, float *out);

#ifdef _OPENMP
#pragma omp end declare target
#endif

#ifdef __cplusplus
}
#endif

#endif /* DNNK_H */
