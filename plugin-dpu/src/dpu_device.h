//===- dpu_device.h - One DPU as an OpenMP device -----------------*- C++
//-*-===//
//
// The device logic behind the ABI glue: images, memory, queues and events of
// one DPU, on top of a protocol Connection. Errors are values here and turn
// into OFFLOAD_FAIL (after a message naming the device) only in the glue.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "client/connection.h"
#include "memory_pool.h"
#include "omptarget_abi.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <vector>

namespace ompdpu::plugin {

/// Operations of one __tgt_async_info, issued without waiting; the server
/// runs them in Seq order.
struct Event;

struct AsyncQueue {
  uint32_t Id = 0;
  uint64_t Epoch = 0; ///< incremented each time the queue is reused
  uint32_t NextSeq = 0;
  std::vector<client::Ticket> InFlight;
  /// InFlight as events see it, shared by every event recorded until the
  /// queue changes (libomptarget records one event per new mapping).
  std::shared_ptr<const std::vector<client::Ticket>> Snapshot;
  /// Small submits not sent yet: they leave together, in one message, just
  /// before the next operation of the queue (usually the launch).
  protocol::SubmitV Coalesced;
  std::vector<uint8_t> CoalescedBytes;
  /// Coalesced bytes sent and still read by UCX until the queue is
  /// synchronized (moving a vector keeps its bytes where they are).
  std::vector<std::vector<uint8_t>> Sent;
  /// Emptied buffers of earlier regions, for CoalescedBytes to reuse: a
  /// region of small maps then allocates nothing for them.
  std::vector<std::vector<uint8_t>> SpareBytes;
  /// Events recorded while coalesced submits were unsent.
  std::vector<Event *> PendingEvents;
};

/// A recorded point in a queue: the operations issued before it. Small
/// submits coalesced in the queue may not be sent yet when the event is
/// recorded; the event is then resolved when the queue sends them.
struct Event {
  std::mutex M;
  std::condition_variable Resolved;
  bool Pending = false;    ///< waits for the queue's next flush
  uint32_t QueueId = 0;    ///< queue it was recorded in (0: none)
  uint64_t QueueEpoch = 0; ///< that queue's use (queues are reused)
  std::shared_ptr<const std::vector<client::Ticket>> Before;
};

/// Events come and go with every mapping: they are recycled, not freed.
Event *acquireEvent();
void releaseEvent(Event *E);

/// One DPU server seen as an OpenMP device.
class DpuDevice {
public:
  DpuDevice(int32_t Index, std::unique_ptr<client::Connection> C);
  ~DpuDevice() { delete SpareQueue.load(); }

  /// "device 0 (127.0.0.1:18515)", the prefix of every message.
  std::string name() const;
  /// Facts from the handshake.
  const client::ServerInfo &info() const { return Conn->info(); }
  /// e_machine of images this device runs.
  uint16_t machine() const;

  Expected<__tgt_target_table *> loadBinary(__tgt_device_image *Image);
  Expected<void *> alloc(int64_t Size, int32_t Kind);
  Status free(void *Ptr);
  Status submit(void *Dst, const void *Src, int64_t Size,
                __tgt_async_info *Async);
  Status retrieve(void *Dst, const void *Src, int64_t Size,
                  __tgt_async_info *Async);
  Status exchange(const void *Src, DpuDevice &Dst, void *DstPtr, int64_t Size,
                  __tgt_async_info *Async);
  /// Entry is what loadBinary put in the target table for the kernel.
  Status launch(void *Entry, void **Args, ptrdiff_t *Offsets, int32_t NumArgs,
                __tgt_async_info *Async);
  /// Wait for every operation of the queue; reset Async->Queue.
  Status synchronize(__tgt_async_info *Async);

  Status recordEvent(Event *E, __tgt_async_info *Async);
  /// Make Async (or, without it, the caller) wait for the event.
  Status waitEvent(Event *E, __tgt_async_info *Async);

  /// Human-readable description (print_device_info).
  void printInfo() const;

private:
  AsyncQueue *queueOf(__tgt_async_info *Async);
  /// Send the queue's coalesced submits, if any.
  void flushCoalesced(AsyncQueue &Q);
  /// Remember an operation issued through Q.
  static void track(AsyncQueue &Q, client::Ticket T);
  /// The operations issued through Q so far, as one shared list.
  static std::shared_ptr<const std::vector<client::Ticket>>
  snapshot(AsyncQueue &Q);
  /// Issue through a queue (Async set) or synchronously (Async null).
  template <typename IssueFn>
  Status perform(__tgt_async_info *Async, IssueFn F);

  int32_t Index;
  std::unique_ptr<client::Connection> Conn;
  DeviceMemoryPool Pool;
  std::mutex M; // guards the members below
  uint32_t NextQueueId = 1;
  std::vector<std::unique_ptr<AsyncQueue>> FreeQueues;
  /// One more free queue, outside M (see queueOf); owned by the device.
  std::atomic<AsyncQueue *> SpareQueue{nullptr};
  /// What the target table holds as a kernel's address: libomptarget only
  /// hands it back to launch(), which then needs no lookup.
  struct KernelRecord {
    uint16_t Handle = 0; ///< names the kernel in Run requests
  };
  struct ImageTable {
    std::vector<__tgt_offload_entry> Entries;
    std::list<std::string> Names;     // storage the entries' names point into
    std::deque<KernelRecord> Kernels; // storage the kernel entries point to
    __tgt_target_table Table{};
  };
  std::list<ImageTable> Images;
};

} // namespace ompdpu::plugin
