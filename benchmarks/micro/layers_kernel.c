/* The device image of ompdpu-launch-layers: one empty kernel in an
 * omp_offloading_entries section, as clang lays out a target region's entry.
 * Built without a C library for the servers' ISA (DNNK_OFFLOAD_TRIPLE). */
#include "omptarget_abi.h"

void layers_empty_kernel(void) {}
__attribute__((section("omp_offloading_entries"),
               used)) struct __tgt_offload_entry layers_entries[1] = {
    {(void *)layers_empty_kernel, "layers_empty_kernel", 0, 0, 0}};
