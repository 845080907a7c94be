/* Workload 3, convolution layer offload, ways (a) and (b): forward +
 * backward (data and weights) of one layer per step,
 *
 *   host     on the host
 *   offload  in one target region on the DPU per step: inputs mapped to,
 *            outputs mapped from (the transfers are part of the step), the
 *            workspace resident on the device across steps
 *
 * Way (c), an MPI rank on the DPU, is conv_mpi.c; all three print the same
 * checksum of every step's outputs.
 *
 *   suite-conv --mode host|offload [--layer 3x3|1x1] [--batch N] [--steps S]
 *              [--warmup W] */
#include <omp.h>

#include "conv.h"
#include "ompdpu.h"

int main(int argc, char **argv) {
  const char *mode = suite_opt(argc, argv, "--mode", "offload");
  /* resident (default): the arrays are allocated on the DPU once and each
   * step's region moves data with map(always, ...) -- no allocation per
   * step, as the MPI rank keeps its buffers; step: plain per-step maps. */
  int resident = strcmp(suite_opt(argc, argv, "--maps", "resident"), "step");
  conv_opts o = conv_parse(argc, argv);
  int offload = strcmp(mode, "offload") == 0;
  if (!offload && strcmp(mode, "host") != 0)
    suite_die("--mode must be host or offload");
  conv_data c;
  conv_data_init(&c, conv_layer(o.layer, o.batch));
  dnnk_conv_desc d = c.d;
  long nx = c.n.x, nw = c.n.w, ny = c.n.y, nws = c.n.ws, nout = c.nout;
  int k = d.k;
  float *x = c.x, *w = c.w, *bias = c.bias, *dy = c.dy, *out = c.out;
  float *ws = (float *)suite_alloc(sizeof(float) * nws);

  int dev = -1, isa = conv_isa();
  if (offload) {
    dev = ompdpu_device(0);
    if (dev < 0)
      suite_die("no DPU (run under ompdpu run or set OMPDPU_DEVICES)");
    int on_host = 1;
#pragma omp target device(dev) map(from : on_host)
    on_host = omp_is_initial_device();
    if (on_host)
      suite_die("target region ran on the host");
#pragma omp target device(dev) map(from : isa)
    isa = conv_isa();
    /* The workspace lives on the DPU for the whole run. */
#pragma omp target enter data device(dev) map(alloc : ws[0 : nws])
    if (resident) {
#pragma omp target enter data device(dev) map(alloc : x[0 : nx], w[0 : nw],   \
                                              bias[0 : k], dy[0 : ny],         \
                                              out[0 : nout])
    }
  }

  double *step_s = (double *)suite_alloc(sizeof(double) * (o.steps + 1));
  uint64_t hash = SUITE_FNV_INIT;
  double l2 = 0.0;
  for (int s = -o.warmup; s < o.steps; ++s) {
    double t0 = suite_now();
    if (offload && resident) {
#pragma omp target device(dev) map(to : d)                                    \
    map(always, to : x[0 : nx], w[0 : nw], bias[0 : k], dy[0 : ny])            \
    map(always, from : out[0 : nout])
      conv_passes(&d, x, w, bias, dy, out, out + ny, out + ny + nx,
                  out + ny + nx + nw, ws);
    } else if (offload) {
#pragma omp target device(dev) map(to : d, x[0 : nx], w[0 : nw],             \
                                   bias[0 : k], dy[0 : ny])                    \
    map(from : out[0 : nout])
      conv_passes(&d, x, w, bias, dy, out, out + ny, out + ny + nx,
                  out + ny + nx + nw, ws);
    } else {
      conv_passes(&d, x, w, bias, dy, c.y, c.dx, c.dw, c.db, ws);
    }
    double t = suite_now() - t0;
    if (s >= 0) {
      step_s[s] = t;
      hash = conv_after_step(&c, hash, &l2);
    }
  }
  if (offload) {
#pragma omp target exit data device(dev) map(delete : ws[0 : nws])
    if (resident) {
#pragma omp target exit data device(dev) map(delete : x[0 : nx], w[0 : nw],   \
                                             bias[0 : k], dy[0 : ny],          \
                                             out[0 : nout])
    }
  }
  conv_report(offload ? "offload" : "host", &o, &c, step_s, hash, l2, isa);
  return 0;
}
