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

/* Claims the next item of a loop the team shares dynamically: a thread that
 * wakes late (after a pause the workers sleep) leaves its items to those
 * already running, and there is no per-chunk runtime call (libomp's dynamic
 * schedule formats a debug string for every chunk). */
static inline long dnnk_claim(long *counter) {
  long item;
#pragma omp atomic capture
  item = (*counter)++;
  return item;
}

/* Tells the core that this thread is spinning (frees resources for a
 * hyperthread sibling, and saves power). AArch64 is tested first: clang's
 * offload compilation for an aarch64 device also defines the x86_64 host's
 * macros, and x86 builtins do not compile there. */
static inline void dnnk_spin_pause(void) {
#if defined(__aarch64__)
  __asm__ __volatile__("yield");
#elif defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/* Counts one finished item of a phase others wait for (wait_count). */
static inline void dnnk_count_done(long *done) {
#pragma omp atomic update seq_cst
  ++*done;
}

/* Waits until total items of a phase are done: unlike a barrier it waits
 * for the work, not for every thread (one still asleep has claimed none). */
static inline void dnnk_wait_count(long *done, long total) {
  long seen;
  do {
#pragma omp atomic read seq_cst
    seen = *done;
    if (seen < total)
      dnnk_spin_pause();
  } while (seen < total);
}

#endif /* DNNK_OMP_COMPAT_H */
