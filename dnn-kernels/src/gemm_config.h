/* Register and cache blocking of the packed GEMM, chosen per target ISA.
 *
 * The micro-kernel keeps an MR x NR tile of C in registers: NR is a multiple
 * of the vector width so that each row is a whole number of vectors, and
 * MR * NR / width accumulators plus a few B vectors must fit the register
 * file (32 vectors on AVX-512 and AArch64 NEON, 16 on AVX2/SSE). The values
 * are plain numbers, not intrinsics; any of them can be overridden with -D
 * for tuning. */
#ifndef DNNK_GEMM_CONFIG_H
#define DNNK_GEMM_CONFIG_H

#if defined(__AVX512F__)
/* 16 lanes, 32 registers: 8 rows x 3 vectors = 24 accumulators. Measured
 * against 12 x 32 and 6 x 64 (same register use): 8 rows waste least on the
 * small output-channel counts of convolutions (6, 16, 64). */
#define DNNK_VLEN_DEFAULT 16
#define DNNK_MR_DEFAULT 8
#define DNNK_NR_DEFAULT 48
#define DNNK_KC_DEFAULT 256
#define DNNK_CG_NB_DEFAULT (DNNK_NR_DEFAULT * 8)
/* Blocked layout: one vector of 16 channels; 2 blocks x 12 pixels = 24. */
#define DNNK_CB_DEFAULT 16
#define DNNK_BK_RW_DEFAULT 12
#elif defined(__AVX2__) || defined(__AVX__)
/* 8 lanes, 16 registers: 6 rows x 2 vectors = 12 accumulators. */
#define DNNK_VLEN_DEFAULT 8
#define DNNK_MR_DEFAULT 6
#define DNNK_NR_DEFAULT 16
#define DNNK_KC_DEFAULT 256
#define DNNK_CG_NB_DEFAULT (DNNK_NR_DEFAULT * 16)
/* 8-channel blocks; 2 blocks x 6 pixels = 12 of the 16 registers. */
#define DNNK_CB_DEFAULT 8
#define DNNK_BK_RW_DEFAULT 6
#elif defined(__aarch64__) || defined(__ARM_NEON)
/* 4 lanes, 32 registers (Cortex-A72 of BlueField-2): 8 x 3 vectors = 24.
 * Caches: 32 KiB L1D per core, 1 MiB L2 per pair of cores, 6 MiB L3. A KC
 * x NR B sliver is 12 KiB (L1 keeps it and the 8 KiB A sliver); the MC x KC
 * A block is 192 KiB and convGemm's B block 192 KiB, which together fit a
 * core's half of the L2. */
#define DNNK_VLEN_DEFAULT 4
#define DNNK_MR_DEFAULT 8
#define DNNK_NR_DEFAULT 12
#define DNNK_KC_DEFAULT 256
#define DNNK_CG_NB_DEFAULT (DNNK_NR_DEFAULT * 16)
/* One q register of 4 channels per block; 2 blocks x 12 pixels = 24. */
#define DNNK_CB_DEFAULT 4
#define DNNK_BK_RW_DEFAULT 12
#else
/* SSE2 baseline: 4 lanes, 16 registers: 4 rows x 2 vectors = 8. */
#define DNNK_VLEN_DEFAULT 4
#define DNNK_MR_DEFAULT 4
#define DNNK_NR_DEFAULT 8
#define DNNK_KC_DEFAULT 256
#define DNNK_CG_NB_DEFAULT (DNNK_NR_DEFAULT * 32)
#define DNNK_CB_DEFAULT 4
#define DNNK_BK_RW_DEFAULT 6
#endif

/* Floats per vector register of the micro-kernel (divides NR). */
#ifndef DNNK_VLEN
#define DNNK_VLEN DNNK_VLEN_DEFAULT
#endif
#ifndef DNNK_MR
#define DNNK_MR DNNK_MR_DEFAULT
#endif
#ifndef DNNK_NR
#define DNNK_NR DNNK_NR_DEFAULT
#endif
/* Depth of a packed panel: an NR-wide B sliver (KC * NR floats) should stay
 * in L1 while the A block streams from L2. */
#ifndef DNNK_KC
#define DNNK_KC DNNK_KC_DEFAULT
#endif
/* Depth of the GEMM's own panels (dnnk_sgemm). Deeper than convGemm's
 * slices where C's passes cost more than a B sliver beyond L1: on AVX-512,
 * with KC 256 a square 2048 product re-read and re-wrote its 16 MiB C from
 * L3 eight times. */
#ifndef DNNK_GEMM_KC
#if defined(__AVX512F__)
#define DNNK_GEMM_KC 512
#else
#define DNNK_GEMM_KC DNNK_KC
#endif
#endif
/* Rows of the packed A block (a multiple of MR), sized for L2. */
#ifndef DNNK_MC
#define DNNK_MC (DNNK_MR * 24)
#endif
/* Columns of the packed B panel (a multiple of NR), sized for L2/L3. */
#ifndef DNNK_NC
#define DNNK_NC (DNNK_NR * 128)
#endif

/* Columns of convGemm's per-thread packed B block (a multiple of NR): with
 * KC rows it should take about a quarter of a core's L2 share. */
#ifndef DNNK_CG_NB
#define DNNK_CG_NB DNNK_CG_NB_DEFAULT
#endif
/* Depth slice of convGemm when B is read in place from a padded image:
 * deeper than KC, since there is no packed sliver to keep in L1. */
#ifndef DNNK_CG_KC_INPLACE
#define DNNK_CG_KC_INPLACE 1024
#endif
/* Most floats of one thread's packed B block in convGemm (its workspace
 * grows with it, times the threads). */
#ifndef DNNK_CG_BLOCK
#define DNNK_CG_BLOCK 32768
#endif

/* Channels per block of the blocked layout (DNNK_NCHWC): one vector, so a
 * pixel's block is one register. Changing it changes the tensor layout. */
#ifndef DNNK_CB
#define DNNK_CB DNNK_CB_DEFAULT
#endif
/* Output pixels of the blocked direct kernel's register tile (times 2
 * channel blocks of accumulators, plus 2 weight vectors). */
#ifndef DNNK_BK_RW
#define DNNK_BK_RW DNNK_BK_RW_DEFAULT
#endif

#endif /* DNNK_GEMM_CONFIG_H */
