/* IDX reader over zlib: gzip or plain files, every header field, length
 * and the gzip trailer (CRC) checked, errors named by file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "dnnt_data.h"

/* zlib's message without the path it puts in front. */
static const char *gz_message(gzFile f, const char *path) {
  int code;
  const char *msg = gzerror(f, &code);
  size_t n = strlen(path);
  if (!strncmp(msg, path, n) && !strncmp(msg + n, ": ", 2))
    msg += n + 2;
  return msg;
}

/* Reads exactly n bytes; -1 with the reason in err otherwise. */
static int read_exact(gzFile f, const char *path, void *buf, size_t n,
                      const char *what, char *err, size_t errlen) {
  size_t got = 0;
  while (got < n) {
    unsigned chunk = n - got > (1u << 30) ? (1u << 30) : (unsigned)(n - got);
    int r = gzread(f, (char *)buf + got, chunk);
    if (r < 0) {
      snprintf(err, errlen, "%s: corrupt gzip data while reading the %s: %s",
               path, what, gz_message(f, path));
      return -1;
    }
    if (r == 0)
      break;
    got += (size_t)r;
  }
  if (got < n) {
    int code;
    gzerror(f, &code);
    snprintf(
        err, errlen,
        "%s: truncated: the %s needs %zu bytes, the file ends after %zu%s%s",
        path, what, n, got, code == Z_BUF_ERROR ? " (" : "",
        code == Z_BUF_ERROR ? "incomplete gzip stream)" : "");
    return -1;
  }
  return 0;
}

/* Checks nothing follows the data; reading to the end also makes zlib
 * verify the gzip CRC and length. */
static int check_end(gzFile f, const char *path, char *err, size_t errlen) {
  char extra[64];
  int r = gzread(f, extra, sizeof extra);
  if (r < 0) {
    snprintf(err, errlen, "%s: corrupt gzip data: %s", path,
             gz_message(f, path));
    return -1;
  }
  if (r > 0) {
    snprintf(err, errlen,
             "%s: unexpected bytes after the data (not an IDX "
             "file of the size its header gives)",
             path);
    return -1;
  }
  return 0;
}

static uint32_t be32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
         p[3];
}

/* Opens path, reads and checks the IDX header: magic, dimensions. */
static gzFile open_idx(const char *path, uint32_t magic, uint32_t *dims,
                       int ndims, char *err, size_t errlen) {
  FILE *probe = fopen(path, "rb");
  if (!probe) {
    snprintf(err, errlen, "%s: cannot open: %s%s", path, strerror(errno),
             errno == ENOENT ? " (install it: apt-get install "
                               "dataset-fashion-mnist, or pass --data DIR)"
                             : "");
    return NULL;
  }
  struct stat st;
  int dir = fstat(fileno(probe), &st) == 0 && S_ISDIR(st.st_mode);
  fclose(probe);
  if (dir) {
    snprintf(err, errlen, "%s: is a directory, not an IDX file", path);
    return NULL;
  }
  gzFile f = gzopen(path, "rb");
  if (!f) {
    snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    return NULL;
  }
  unsigned char head[16];
  if (read_exact(f, path, head, 4 + 4 * (size_t)ndims, "IDX header", err,
                 errlen)) {
    gzclose(f);
    return NULL;
  }
  if (be32(head) != magic) {
    snprintf(err, errlen,
             "%s: not an IDX %s file (magic 0x%08x, expected "
             "0x%08x)",
             path, magic == 0x803 ? "image" : "label", be32(head), magic);
    gzclose(f);
    return NULL;
  }
  for (int i = 0; i < ndims; ++i) {
    dims[i] = be32(head + 4 + 4 * i);
    if (dims[i] == 0 || dims[i] > (i == 0 ? 100000000u : 65536u)) {
      snprintf(err, errlen, "%s: implausible dimension %d in the header: %u",
               path, i, dims[i]);
      gzclose(f);
      return NULL;
    }
  }
  return f;
}

int dnnt_read_idx_images(const char *path, uint8_t **images, long *count,
                         int *rows, int *cols, char *err, size_t errlen) {
  uint32_t d[3];
  gzFile f = open_idx(path, 0x803, d, 3, err, errlen);
  if (!f)
    return -1;
  size_t bytes = (size_t)d[0] * d[1] * d[2];
  uint8_t *buf = (uint8_t *)malloc(bytes);
  if (!buf) {
    snprintf(err, errlen, "%s: out of memory for %zu bytes", path, bytes);
    gzclose(f);
    return -1;
  }
  if (read_exact(f, path, buf, bytes, "image data", err, errlen) ||
      check_end(f, path, err, errlen)) {
    free(buf);
    gzclose(f);
    return -1;
  }
  gzclose(f);
  *images = buf;
  *count = d[0];
  *rows = (int)d[1];
  *cols = (int)d[2];
  return 0;
}

int dnnt_read_idx_labels(const char *path, int classes, int32_t **labels,
                         long *count, char *err, size_t errlen) {
  uint32_t d[1];
  gzFile f = open_idx(path, 0x801, d, 1, err, errlen);
  if (!f)
    return -1;
  uint8_t *raw = (uint8_t *)malloc(d[0]);
  int32_t *out = (int32_t *)malloc(sizeof(int32_t) * d[0]);
  int rc = -1;
  if (!raw || !out)
    snprintf(err, errlen, "%s: out of memory", path);
  else if (!read_exact(f, path, raw, d[0], "label data", err, errlen) &&
           !check_end(f, path, err, errlen)) {
    rc = 0;
    for (uint32_t i = 0; i < d[0] && rc == 0; ++i) {
      if (raw[i] >= classes) {
        snprintf(err, errlen, "%s: label %u of item %u is out of range 0-%d",
                 path, raw[i], i, classes - 1);
        rc = -1;
      }
      out[i] = raw[i];
    }
  }
  gzclose(f);
  free(raw);
  if (rc) {
    free(out);
    return -1;
  }
  *labels = out;
  *count = d[0];
  return 0;
}

int dnnt_load_fashion(const char *dir, const char *split, dnnt_dataset *d,
                      char *err, size_t errlen) {
  char ipath[4096], lpath[4096];
  snprintf(ipath, sizeof ipath, "%s/%s-images-idx3-ubyte.gz", dir, split);
  snprintf(lpath, sizeof lpath, "%s/%s-labels-idx1-ubyte.gz", dir, split);
  memset(d, 0, sizeof *d);
  long ni = 0, nl = 0;
  int rows = 0, cols = 0;
  if (dnnt_read_idx_images(ipath, &d->images, &ni, &rows, &cols, err, errlen))
    return -1;
  if (dnnt_read_idx_labels(lpath, 10, &d->labels, &nl, err, errlen)) {
    dnnt_dataset_free(d);
    return -1;
  }
  if (ni != nl) {
    snprintf(err, errlen, "%s has %ld images but %s has %ld labels", ipath, ni,
             lpath, nl);
    dnnt_dataset_free(d);
    return -1;
  }
  d->count = ni;
  d->c = 1, d->h = rows, d->w = cols, d->classes = 10;
  return 0;
}

void dnnt_dataset_truncate(dnnt_dataset *d, long count) {
  if (count > 0 && count < d->count)
    d->count = count;
}

void dnnt_dataset_free(dnnt_dataset *d) {
  free(d->images);
  free(d->labels);
  memset(d, 0, sizeof *d);
}
