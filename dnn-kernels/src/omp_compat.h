/* The OpenMP runtime calls dnnk uses, with serial stand-ins so the library
 * also builds without -fopenmp (as the serial cross-ISA check does). */
#ifndef DNNK_OMP_COMPAT_H
#define DNNK_OMP_COMPAT_H

#ifdef _OPENMP
#include <omp.h>
#else
/* Serial build: one thread, never inside a parallel region. */
static inline int omp_get_thread_num(void) { return 0; }
/* Serial build: teams have one thread. */
static inline int omp_get_num_threads(void) { return 1; }
/* Serial build: one thread available. */
static inline int omp_get_max_threads(void) { return 1; }
/* Serial build: no parallel region is ever active. */
static inline int omp_in_parallel(void) { return 0; }
#endif

#endif /* DNNK_OMP_COMPAT_H */
