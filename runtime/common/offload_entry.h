/*===- offload_entry.h - One offload entry of an OpenMP image ----*- C -*-===//
 *
 * The layout of one entry of an image's omp_offloading_entries section and
 * of the host entry tables libomptarget 14-18 hands to plugins, defined once
 * for the server that reads images, the ELF checks and the LLVM 14 adapter.
 * Also C: test and benchmark images lay out their entries with it.
 *
 *===----------------------------------------------------------------------===*/
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// One kernel (size 0) or global of an image (addr: host or device address).
struct __tgt_offload_entry {
  void *addr;
  char *name;
  size_t size;
  int32_t flags;
  int32_t reserved;
};

#ifdef __cplusplus
}
#endif

#if defined(__LP64__) || defined(_LP64)
#ifdef __cplusplus
static_assert(sizeof(__tgt_offload_entry) == 32, "LP64 entry layout");
#else
_Static_assert(sizeof(struct __tgt_offload_entry) == 32, "LP64 entry layout");
#endif
#endif
