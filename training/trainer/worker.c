/* The worker way (beyond the papers: Jain et al.'s "DPU as a worker", done
 * adaptively): besides augmentation and validation, the DPU computes the
 * gradient of the first k images of each batch while the host computes
 * the rest; k follows the measured speeds of both. Dropout masks and the
 * loss scale are per image, so the network is the host way's up to the
 * rounding of the split sum. */
#include <stdlib.h>

#include "feed.h"

/* The split and the measured speeds (images per second, smoothed). */
static struct {
  int k;
  double host_rate, dpu_rate;
  long dpu_images, images;
} w;

/* Exponential smoothing of a speed. */
static double smooth(double old, double now) {
  return old > 0 ? 0.8 * old + 0.2 * now : now;
}

float worker_step(run *r, feeder *f, dnnt_trainer *tr, const float *params,
                  const float *x, const int32_t *labels, dnnt_batch_key key,
                  float *grads, long *correct) {
  int n = r->local, G = r->o.batch;
  long img = (long)r->net.in_c * r->net.in_h * r->net.in_w, np = r->net.nparams;
  if (w.k == 0)
    w.k = n / 4 > 0 ? n / 4 : 1; /* a first guess: the speeds decide */
  int k = n > 1 && w.k > 0 && !feed_dpu_lost() ? w.k : 0;
  if (k)
    off_grad_issue(f, params, x, labels, k, key);
  double t0 = now_s();
  dnnt_batch_key hk = key;
  hk.first_image += k;
  long ch = 0, cd = 0;
  float lh =
      dnnt_forward_train(tr, params, x + k * img, labels + k, n - k, hk, &ch);
  dnnt_backward(tr, params, labels + k, n - k, (float)(n - k) / G, grads, NULL,
                NULL);
  double th = now_s() - t0;
  float ld = 0;
  if (k) {
    if (off_grad_wait(f) == 0) {
      ld = f->grad_res[0];
      cd = (long)f->grad_res[1];
      w.dpu_rate = smooth(w.dpu_rate, k / (f->grad_t1 - f->grad_t0));
    } else {
      /* The DPU is gone: its share on the host, and no more shares. */
      ld = dnnt_forward_train(tr, params, x, labels, k, key, &cd);
      dnnt_backward(tr, params, labels, k, (float)k / G, f->gw, NULL, NULL);
      w.dpu_rate = 0;
    }
    for (long j = 0; j < np; ++j)
      grads[j] += f->gw[j];
  }
  w.host_rate = smooth(w.host_rate, (n - k) / th);
  double share = w.dpu_rate / (w.host_rate + w.dpu_rate);
  int next = (int)(n * share + 0.5);
  /* At least one image each, so both speeds stay measured. */
  w.k = feed_dpu_lost() ? -1 : next < 1 ? 1 : next > n - 1 ? n - 1 : next;
  w.dpu_images += k;
  w.images += n;
  *correct = ch + cd;
  return (lh * (n - k) + ld * k) / n;
}

void worker_epoch_note(const run *r) {
  note(r,
       "worker: the DPU trained %.0f%% of the images (host %.0f, DPU %.0f "
       "images/s)\n",
       w.images ? 100.0 * w.dpu_images / w.images : 0.0, w.host_rate,
       w.dpu_rate);
  w.dpu_images = w.images = 0;
}
