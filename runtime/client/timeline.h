//===- timeline.h - OMPDPU_TRACE=<file>: a Chrome trace of the process -*- C++
//-*-//
//
// When OMPDPU_TRACE names a file (rather than a number), every request to
// every device (issue to completion), every wait of a host thread for one,
// and what each device's session did (each request from arrival to answer,
// each kernel call; its clock mapped onto ours) are written there as Chrome
// trace-event JSON, which Perfetto and chrome://tracing open. The file is
// rewritten whole as each connection ends; "%p" in the name is the pid.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "client/clock_sync.h"
#include "common/status.h"
#include "protocol/messages.h"

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace ompdpu::client {

class Timeline {
public:
  using TimePoint = std::chrono::steady_clock::time_point;

  /// The process's timeline, or null when OMPDPU_TRACE names no file.
  static Timeline *active();
  /// A device's track (its index is its place in the file).
  unsigned addDevice(const std::string &Label);
  /// A request to Device from its issue to its completion.
  void request(unsigned Device, protocol::MsgType Type, uint32_t Id,
               uint16_t Queue, uint64_t Bytes, TimePoint Issued,
               TimePoint Done);
  /// The calling thread waited for a request of Type to Device.
  void wait(unsigned Device, protocol::MsgType Type, TimePoint From,
            TimePoint To);
  /// What Device's session recorded, its times mapped through Clock.
  void session(unsigned Device, const protocol::TraceRecord &R,
               const ClockMap &Clock);
  /// Device's connection reached its session.
  void attached(unsigned Device);
  /// Why Device's session events are missing.
  void sessionMissing(unsigned Device, const std::string &Why);
  /// Write (or rewrite) the file with everything so far; nothing while no
  /// connection has reached a session: a plugin loaded twice (LLVM 16 tries
  /// two names) has a copy whose only connection is dropped at its
  /// handshake, and it must not overwrite the trace of the one in use.
  Status write();
  const std::string &path() const { return Path; }

private:
  explicit Timeline(std::string Path);
  struct Device {
    std::string Label;
    std::string Note; ///< clock uncertainty, or why sessions are missing
    uint32_t SessionPid = 0;
    uint64_t Dropped = 0;
    bool Attached = false;
  };
  /// One complete ('X') or async ('b'/'e') event.
  struct Event {
    bool Async = false;
    unsigned Process = 0; ///< 0: this one; 1 + k: device k's session
    uint32_t Thread = 0;
    std::string Name, Category;
    uint64_t Id = 0; ///< async: pairs begin and end
    int64_t StartNs = 0, DurationNs = 0;
    uint64_t Bytes = 0;
    uint32_t RequestId = 0;
    int Queue = -1;
    unsigned Device = 0;
  };
  int64_t sinceOrigin(TimePoint T) const;

  std::string Path;
  TimePoint Origin;
  std::mutex M; // guards everything below
  std::vector<Device> Devices;
  std::vector<Event> Events;
  uint64_t NextAsyncId = 1;
};

} // namespace ompdpu::client
