//===- spin_lock.h - A lock whose release is a plain store ------*- C++ -*-===//
//
// For short critical sections taken on every mapped variable (the plugin's
// memory pool). std::mutex releases with an atomic read-modify-write (it
// must look for sleepers), which waits for the thread's pending stores to
// drain; here release is a store, and only taking the lock is atomic.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <atomic>
#include <sched.h>

namespace ompdpu {

class SpinLock {
public:
  void lock() {
    for (unsigned Spins = 0; Taken.exchange(true, std::memory_order_acquire);) {
      // Wait reading, not writing, the flag; give the core away when the
      // holder seems descheduled (two cores, often fewer).
      while (Taken.load(std::memory_order_relaxed))
        if (++Spins % 128 == 0)
          sched_yield();
        else
          relax();
    }
  }
  bool try_lock() { return !Taken.exchange(true, std::memory_order_acquire); }
  void unlock() { Taken.store(false, std::memory_order_release); }

private:
  static void relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }
  std::atomic<bool> Taken{false};
};

} // namespace ompdpu
