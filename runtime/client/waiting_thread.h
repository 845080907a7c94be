//===- waiting_thread.h - How a thread waits for a reply ----*- C++ -*-===//
//
// A host thread that sleeps for a reply often shares its core with the
// program's computing threads (a one-core MPI rank, an OpenMP team as large
// as the cores). On Linux's EEVDF scheduler a woken thread then waits until
// the running one has used its time slice (1.4 ms on two cores): the
// region's next step, the rendezvous of a large reply and the completion of
// the target task wait that long too. A thread with a shorter slice
// (sched_attr.sched_runtime, Linux 6.12 and later) preempts at once.
//
// The thread keeps the short slice once it has slept for a reply: giving
// its own back when the wait ends would hand the core back to the computing
// thread before the woken one has completed the region. Its share of the
// core stays the same, in shorter turns. Threads it creates later start
// with the default slice (reset-on-fork). Earlier kernels ignore the
// request; threads with a real-time or idle policy, a negative nice value
// or a slice of their own as short are left as they are.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace ompdpu::client {

/// The calling thread is about to sleep for a reply: ask for a slice of
/// Micros (0: nothing), once per thread.
void shortenSliceForWakeups(double Micros);

/// The calling thread's slice in nanoseconds as the kernel reports it, or
/// -1 when it does not.
int64_t currentSliceNanos();

} // namespace ompdpu::client
