//===- events.h - Events: recorded points in a queue ------------*- C++ -*-===//
//
// libomptarget records an event after each new mapping's copy and has
// another thread that finds the mapping wait on it. An event names what it
// waits for: the operations issued before it in its queue (a Horizon), known
// when it is recorded or, while the queue's batch is unsent, once that batch
// leaves (a FlushPoint). A waiter never waits for the queue's thread to send
// that batch: it sends it itself. libomptarget 19 waits holding the lock of
// the whole mapping table, which the queue's thread needs to go on.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "client/connection.h"

#include <memory>
#include <mutex>
#include <vector>

namespace ompdpu::plugin {

struct AsyncQueue;

/// What an event waits for: the operations of its queue issued before it.
struct Horizon {
  std::vector<client::Ticket> Done; ///< must have finished
  /// The Batch the event was recorded in, when that Batch runs a kernel:
  /// the event follows the Batch's copies but precedes its kernel, so only
  /// its bytes must be in place (asked of the server with Landed).
  client::Ticket Partial;
  uint32_t Queue = 0, Seq = 0; ///< Partial's queue and sequence number
};

/// A queue's batch leaving, for the events recorded before it left: what
/// they wait for is known from then on. One per batch, not one per event:
/// libomptarget records an event for each new mapping of a region.
struct FlushPoint {
  explicit FlushPoint(AsyncQueue *Q) : Queue(Q) {}
  /// Whose batch it is; queues live as long as their device.
  AsyncQueue *const Queue;
  std::mutex M; ///< guards the members below
  bool Sent = false;
  /// An event was recorded after the batch's launch joined it (set by the
  /// queue's thread before the batch leaves).
  bool AnyAfterKernel = false;
  /// For events recorded before the batch's launch joined it: its copies
  /// (Horizon::Partial) but not its kernel. Without a launch, All.
  std::shared_ptr<const Horizon> BeforeKernel;
  std::shared_ptr<const Horizon> All; ///< for events recorded after it
};

/// A recorded point in a queue: the operations issued before it. The
/// queue's batch may not be sent yet when the event is recorded; the event
/// then waits for its FlushPoint.
///
/// No lock: libomptarget records, waits for and destroys a mapping's event
/// only under that mapping's lock (or after removing it), never two at once.
/// The one thing that changes under a waiter, a FlushPoint, has its own.
struct Event {
  uint32_t QueueId = 0;     ///< queue it was recorded in (0: none)
  uint64_t QueueEpoch = 0;  ///< that queue's use (queues are reused)
  bool AfterKernel = false; ///< recorded after the pending batch's launch
  std::shared_ptr<const Horizon> Before; ///< known when recorded, or...
  std::shared_ptr<FlushPoint> Point;     ///< ... once this point is Sent
  /// Its batch has not left yet.
  bool pending() const;
};

/// Events come and go with every mapping: they are recycled, not freed.
Event *acquireEvent();
void releaseEvent(Event *E);

} // namespace ompdpu::plugin
