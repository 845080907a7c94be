/* Philox4x32-10 (Salmon et al., SC'11): a counter-based generator. Every
 * draw is a pure function of (seed, epoch, image index, draw number), so any
 * device, thread count or batch split reproduces the same numbers without
 * sharing generator state. Integer arithmetic only: bit-identical on x86 and
 * Arm. */
#include "dnnk.h"

#pragma omp declare target

/* Round multipliers and Weyl key increments of Philox4x32. */
#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

/* One Philox round on counter c with key k. */
static inline void philox_round(uint32_t c[4], const uint32_t k[2]) {
  uint64_t p0 = (uint64_t)PHILOX_M0 * c[0], p1 = (uint64_t)PHILOX_M1 * c[2];
  uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
  uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
  uint32_t n0 = hi1 ^ c[1] ^ k[0], n2 = hi0 ^ c[3] ^ k[1];
  c[0] = n0;
  c[1] = lo1;
  c[2] = n2;
  c[3] = lo0;
}

/* The full 10-round block function, in place on ctr. */
static void philox4x32_10(uint32_t ctr[4], uint32_t k0, uint32_t k1) {
  uint32_t k[2] = {k0, k1};
  for (int r = 0; r < 10; ++r) {
    if (r > 0) {
      k[0] += PHILOX_W0;
      k[1] += PHILOX_W1;
    }
    philox_round(ctr, k);
  }
}

void dnnk_philox_block(const uint32_t ctr_in[4], uint64_t key,
                       uint32_t out[4]) {
  for (int i = 0; i < 4; ++i)
    out[i] = ctr_in[i];
  philox4x32_10(out, (uint32_t)key, (uint32_t)(key >> 32));
}

uint32_t dnnk_philox(uint64_t seed, uint32_t epoch, uint64_t index,
                     uint32_t draw, int word) {
  uint32_t ctr[4] = {epoch, (uint32_t)index, (uint32_t)(index >> 32), draw};
  philox4x32_10(ctr, (uint32_t)seed, (uint32_t)(seed >> 32));
  return ctr[word & 3];
}

#pragma omp end declare target
