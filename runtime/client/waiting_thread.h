//===- waiting_thread.h - How a thread waits for a reply ----*- C++ -*-===//
//
// A host thread that carries an asynchronous region (`target nowait`: a
// hidden helper or a team thread) often shares its core with the program's
// computing threads (a one-core MPI rank, an OpenMP team as large as the
// cores). On Linux's EEVDF scheduler a woken thread then waits until the
// running one has used its time slice (1.4 ms on two cores): the region's
// next step, the rendezvous of a large reply and the completion of the
// target task wait that long too. A thread with a shorter slice
// (sched_attr.sched_runtime, Linux 6.12 and later) preempts at once.
//
// Asked for with OMPDPU_WAKE_SLICE_US: it pays where the DPU's part is on
// the critical path (a pipeline that waits for each region) and costs the
// computing thread its caches at every wake-up where the DPU's part has
// slack (training: 1.5-2% slower). Only a thread that sleeps for an
// operation of an asynchronous queue asks for one, and keeps it: giving its own
// back when the wait ends would hand the core back to the computing thread
// before the woken one has completed the region. Its share of the core stays
// the same, in shorter turns. Threads it creates later start with the default
// slice (reset-on-fork). Earlier kernels ignore the request; threads with a
// real-time or idle policy, a negative nice value or a slice of their own as
// short are left as they are.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace ompdpu::client {

/// The calling thread is about to sleep for the reply to an operation of an
/// asynchronous queue: ask for a slice of Micros (0: nothing), once per
/// thread.
void shortenSliceForWakeups(double Micros);

/// The calling thread's slice in nanoseconds as the kernel reports it, or
/// -1 when it does not.
int64_t currentSliceNanos();

} // namespace ompdpu::client
