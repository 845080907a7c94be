//===- dpu_device.h - One DPU as an OpenMP device ---------------*- C++ -*-===//
//
// The device logic behind the ABI adapters (abi/llvm<N>/): images, memory,
// queues and events of one DPU, on top of a protocol Connection. No LLVM
// type appears here: an adapter turns its ABI's images, target tables and
// async-info objects into the calls below. Errors are values here and turn
// into OFFLOAD_FAIL (after a message naming the device) only in an adapter.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "client/connection.h"
#include "events.h"
#include "launch_results.h"
#include "memory_pool.h"
#include "pointer_slots.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace ompdpu::plugin {

/// A loaded kernel: adapters hand it back to launch(), which then needs no
/// lookup (LLVM's target tables hold it as the kernel's address).
struct KernelRecord {
  KernelRecord(uint16_t H, std::string N) : Handle(H), Name(std::move(N)) {}
  uint16_t Handle = 0;   ///< names the kernel in Run requests
  std::string Name;      ///< its entry's name (__omp_offloading_...)
  KernelResults Results; ///< what followed its last launch
};

/// Operations of one asynchronous queue, issued without waiting; the server
/// runs them in Seq order.
struct AsyncQueue {
  /// Taken by the queue's thread around each operation that changes the
  /// members below (never while it waits), and by a thread waiting for one
  /// of its events that sends its batch. Launch is the queue thread's own.
  std::mutex Lock;
  uint32_t Id = 0;
  uint64_t Epoch = 0; ///< incremented each time the queue is reused
  uint32_t NextSeq = 0;
  std::vector<client::Ticket> InFlight;
  /// InFlight as events see it, shared by every event recorded until the
  /// queue changes (libomptarget records one event per new mapping).
  std::shared_ptr<const Horizon> Snapshot;
  /// The queue's small operations not sent yet: they leave together, as
  /// one Batch, when an operation that cannot join them comes, or at
  /// synchronize. A target region's small maps, its launch and its small
  /// results then make one request and one reply. Operations join in the
  /// order a Batch runs them: submits, a launch, retrieves.
  struct PendingBatch {
    std::vector<protocol::Piece> In;
    std::vector<uint8_t> InBytes; ///< the submits' bytes, back to back
    uint16_t Kernel = 0;          ///< 0: no launch yet
    std::vector<uint64_t> Args;
    std::vector<protocol::Piece> Out;
    std::vector<client::HostRange> Into; ///< where Out's bytes land
    bool empty() const { return In.empty() && !Kernel && Out.empty(); }
    /// A submit would run after the launch or retrieves already here.
    bool closedToSubmits() const { return Kernel || !Out.empty(); }
  } Batch;
  LaunchWindow Launch; ///< its last launch and what followed it
  /// Submit bytes sent and still read by UCX until the queue is
  /// synchronized (moving a vector keeps its bytes where they are).
  std::vector<std::vector<uint8_t>> Sent;
  /// Emptied buffers of earlier regions, for Batch.InBytes to reuse: a
  /// region of small maps then allocates nothing for them.
  std::vector<std::vector<uint8_t>> SpareBytes;
  /// Where events recorded while the batch is unsent learn what they wait
  /// for, once it leaves (null: none recorded).
  std::shared_ptr<FlushPoint> Point;
};

/// An offload entry of the host's copy of an image: the device's entries
/// must match these, in this order.
struct HostEntry {
  std::string Name;
  uint64_t Size = 0; ///< 0: a kernel
  int32_t Flags = 0; ///< the entry's flags (OpenMP's, as clang sets them)
};

/// An entry of a loaded image, in the host entries' order.
struct LoadedEntry {
  KernelRecord *Kernel = nullptr; ///< a kernel; null: a global
  uint64_t Address = 0;           ///< a global's device address
  uint64_t Size = 0;
  int32_t Flags = 0;
  std::string Name;
};

/// Where an allocation may live (OpenMP's allocation kinds).
enum class MemoryKind : int32_t {
  Device = 0,
  Host = 1,
  Shared = 2,
  Default = 3
};

/// One DPU server seen as an OpenMP device. A null AsyncQueue means "now":
/// the call returns when the operation has completed.
class DpuDevice {
public:
  /// The Index-th of the plugin's Count devices.
  DpuDevice(int32_t Index, int32_t Count,
            std::unique_ptr<client::Connection> C);
  ~DpuDevice();

  /// "device 0 (127.0.0.1:18515)", the prefix of every message.
  std::string name() const;
  /// The server's "HOST:PORT", as configured.
  std::string address() const;
  /// Facts from the handshake.
  const client::ServerInfo &info() const { return Conn->info(); }
  /// e_machine of images this device runs (0 for a placeholder).
  uint16_t machine() const;
  /// Stands for a server unreachable at start-up (its number stays taken).
  bool placeholder() const { return Conn->placeholder(); }

  /// Load an image (its ELF bytes) whose host copy has these entries.
  Expected<std::vector<LoadedEntry>>
  loadImage(const void *Image, size_t Size, const std::vector<HostEntry> &Host);
  Expected<void *> alloc(int64_t Size, MemoryKind Kind);
  Status free(void *Ptr);
  Status submit(void *Dst, const void *Src, int64_t Size, AsyncQueue *Q);
  Status retrieve(void *Dst, const void *Src, int64_t Size, AsyncQueue *Q);
  Status exchange(const void *Src, DpuDevice &Dst, void *DstPtr, int64_t Size,
                  AsyncQueue *Q);
  /// Run a kernel; Args are its arguments with their offsets applied.
  Status launch(KernelRecord *Kernel, const uint64_t *Args, size_t Count,
                AsyncQueue *Q);

  /// A queue for asynchronous operations, until synchronize() gives it back.
  AsyncQueue *acquireQueue();
  /// Wait for every operation of Q, then take Q back.
  Status synchronize(AsyncQueue *Q);

  Status recordEvent(Event *E, AsyncQueue *Q);
  /// Make Q (or, without it, the caller) wait for the event.
  Status waitEvent(Event *E, AsyncQueue *Q);

  /// Human-readable description (print_device_info).
  void printInfo() const;
  const client::Connection &connection() const { return *Conn; }
  /// Results asked for with a launch and taken by a retrieve, or not;
  /// counted with OMPDPU_TRACE only.
  uint64_t resultsTaken() const { return Results.Taken; }
  uint64_t resultsMissed() const { return Results.Missed; }

private:
  /// Send the queue's batch, if any; the caller holds Q.Lock.
  void flushBatch(AsyncQueue &Q);
  /// flushBatch, taking Q.Lock.
  void flushBatchLocked(AsyncQueue &Q);
  /// A retrieve through Q, landing by synchronize at the latest.
  Status queueRetrieve(AsyncQueue &Q, void *Dst, const void *Src, int64_t Size);
  /// Send the queue's batch and wait for everything issued through it.
  Status landNow(AsyncQueue &Q);
  /// Remember an operation issued through Q.
  static void track(AsyncQueue &Q, client::Ticket T);
  /// The operations issued through Q so far, as one shared list.
  static std::shared_ptr<const Horizon> snapshot(AsyncQueue &Q);
  /// Issue through a queue, or synchronously (Q null).
  template <typename IssueFn> Status perform(AsyncQueue *Q, IssueFn F);

  int32_t Index;
  int32_t Count; ///< the plugin's devices, as kernels' omp_get_num_devices()
  std::unique_ptr<client::Connection> Conn;
  DeviceMemoryPool Pool;
  PointerSlots Slots;  ///< words whose retrieves must land before returning
  ResultStats Results; ///< of the results asked for with launches
  std::mutex M;        // guards the members below
  uint32_t NextQueueId = 1;
  std::vector<std::unique_ptr<AsyncQueue>> FreeQueues;
  /// One more free queue, outside M (see queueOf); owned by the device.
  std::atomic<AsyncQueue *> SpareQueue{nullptr};
  std::deque<KernelRecord> Kernels; // stable: launch() gets pointers
};

} // namespace ompdpu::plugin
