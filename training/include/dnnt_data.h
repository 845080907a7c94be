/* Data sets for dnnt: IDX files (gzip or plain, read with zlib) such as
 * Fashion-MNIST from Debian's dataset-fashion-mnist, and synthetic images.
 * Every failure returns -1 with a message naming the file and the problem;
 * nothing here exits or crashes on a bad file. */
#ifndef DNNT_DATA_H
#define DNNT_DATA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Labelled uint8 images, NCHW (c x h x w each), labels 0..classes-1. */
typedef struct dnnt_dataset {
  long count;
  int c, h, w, classes;
  uint8_t *images;
  int32_t *labels;
} dnnt_dataset;

/* Where dataset-fashion-mnist installs its files. */
#define DNNT_FASHION_DIR "/usr/share/datasets/fashion-mnist"

/* Reads an IDX image file (magic 0x803: count x rows x cols bytes). */
int dnnt_read_idx_images(const char *path, uint8_t **images, long *count,
                         int *rows, int *cols, char *err, size_t errlen);
/* Reads an IDX label file (magic 0x801), checking labels < classes. */
int dnnt_read_idx_labels(const char *path, int classes, int32_t **labels,
                         long *count, char *err, size_t errlen);
/* Loads split "train" or "t10k" of Fashion-MNIST from dir
 * ({split}-images-idx3-ubyte.gz and {split}-labels-idx1-ubyte.gz). */
int dnnt_load_fashion(const char *dir, const char *split, dnnt_dataset *d,
                      char *err, size_t errlen);
/* Synthetic labelled images (class-dependent patterns plus noise) from a
 * seed, for scaling runs without real data. */
int dnnt_synthetic(long count, int c, int h, int w, int classes, uint64_t seed,
                   dnnt_dataset *d);
/* Resizes every image to h x w (bilinear, half-pixel centres, as PyTorch's
 * interpolate) and replicates a grey channel to c; -1 when the data has
 * other channels than 1 or c, or memory runs out. */
int dnnt_dataset_fit(dnnt_dataset *d, int c, int h, int w);
/* Keeps the first `count` images (no-op if it has fewer). */
void dnnt_dataset_truncate(dnnt_dataset *d, long count);
/* Frees the images and labels. */
void dnnt_dataset_free(dnnt_dataset *d);

#ifdef __cplusplus
}
#endif

#endif
