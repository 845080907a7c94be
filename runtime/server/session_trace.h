//===- session_trace.h - What a session did, for the client's trace -*- C++
//-*-//
//
// Off until the client asks (a Trace Start): then each request from its
// arrival to its answer, and each kernel call, is kept with the session's
// steady clock, up to kMaxEvents, and handed over on Trace Collect. Kernels
// are recorded from any thread; requests from the loop's leader.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/trace_time.h"
#include "protocol/messages.h"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

namespace ompdpu::server {

class SessionTrace {
public:
  /// Events kept at most (about 40 bytes each on the wire).
  static constexpr size_t kMaxEvents = 1 << 20;

  bool on() const { return On.load(std::memory_order_relaxed); }
  void start();
  /// Stop recording and hand over what was recorded.
  protocol::TraceRecord collect();

  /// Request H from From arrived with InBytes of bulk data.
  void arrived(const protocol::Header &H, const void *From, uint64_t InBytes);
  /// ... and is answered now with OutBytes.
  void answered(const protocol::Header &H, const void *From, uint64_t OutBytes);
  /// A kernel ran from StartNs until now.
  void kernel(const std::string &Name, uint64_t StartNs);

private:
  void add(const protocol::TraceEvent &E);
  struct Arrival {
    uint64_t AtNs;
    uint64_t Bytes;
  };
  struct KeyHash {
    size_t operator()(const std::pair<const void *, uint32_t> &K) const {
      return std::hash<const void *>()(K.first) ^ K.second;
    }
  };

  std::atomic<bool> On{false};
  std::mutex M; // guards everything below
  protocol::TraceRecord Record;
  std::unordered_map<std::string, uint32_t> NameIndex;
  std::unordered_map<std::pair<const void *, uint32_t>, Arrival, KeyHash>
      Arrivals;
};

} // namespace ompdpu::server
