/* A shared object shaped like an OpenMP device image: four offload entries
 * in the omp_offloading_entries section (three kernels and a global). */
#include "omptarget_abi.h"

int fixture_global[4];
void fixture_kernel(void) {}
/* Kernel arguments arrive as pointers, as libomptarget passes them. */
void fixture_copy(unsigned long *dst, const unsigned long *src) { *dst = *src; }
/* Runs until another request sets *flag: a long kernel on demand. */
void fixture_wait(volatile unsigned long *flag) {
  while (!*flag)
    ;
}
__attribute__((section("omp_offloading_entries"),
               used)) struct __tgt_offload_entry fixture_entries[4] = {
    {(void *)fixture_kernel, "fixture_kernel", 0, 0, 0},
    {fixture_global, "fixture_global", 16, 0, 0},
    {(void *)fixture_copy, "fixture_copy", 0, 0, 0},
    {(void *)fixture_wait, "fixture_wait", 0, 0, 0}};
