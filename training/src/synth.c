/* Synthetic labelled images: one coarse random template per class plus
 * noise, all from Philox draws of the seed (learnable, reproducible). */
#include <stdlib.h>
#include <string.h>

#include "dnnk.h"
#include "dnnt_data.h"

int dnnt_synthetic(long count, int c, int h, int w, int classes, uint64_t seed,
                   dnnt_dataset *d) {
  memset(d, 0, sizeof *d);
  long img = (long)c * h * w;
  d->images = (uint8_t *)malloc((size_t)(count * img));
  d->labels = (int32_t *)malloc(sizeof(int32_t) * (size_t)count);
  if (!d->images || !d->labels) {
    dnnt_dataset_free(d);
    return -1;
  }
  for (long i = 0; i < count; ++i) {
    int k = (int)(dnnk_philox(seed, 0x6c61626cu, (uint64_t)i, 0, 0) %
                  (uint32_t)classes);
    d->labels[i] = k;
    for (long j = 0; j < img; ++j) {
      /* Templates on a coarse 4x4 grid per channel: a crop that shifts the
       * image by a few pixels keeps the class recognisable. */
      int ch = (int)(j / ((long)h * w)), y = (int)(j / w % h), x = (int)(j % w);
      uint32_t cell = (uint32_t)(ch * 16 + (y * 4 / h) * 4 + x * 4 / w);
      uint32_t t = dnnk_philox(seed, 0x74706c74u, (uint64_t)k, cell, 0);
      uint32_t z = dnnk_philox(seed, 0x6e6f6973u, (uint64_t)i, (uint32_t)j, 1);
      d->images[i * img + j] = (uint8_t)((t % 256) * 5 / 8 + (z % 256) * 3 / 8);
    }
  }
  d->count = count;
  d->c = c, d->h = h, d->w = w, d->classes = classes;
  return 0;
}
