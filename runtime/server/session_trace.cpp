//===- session_trace.cpp - What a session did, for the client's trace -----===//
#include "server/session_trace.h"

#include "common/trace_time.h"

#include <unistd.h>

namespace ompdpu::server {

using protocol::TraceEvent;

void SessionTrace::start() {
  std::lock_guard<std::mutex> L(M);
  Record.SessionPid = static_cast<uint32_t>(getpid());
  On = true;
}

protocol::TraceRecord SessionTrace::collect() {
  std::lock_guard<std::mutex> L(M);
  On = false;
  Arrivals.clear();
  NameIndex.clear();
  protocol::TraceRecord Out = std::move(Record);
  Record = protocol::TraceRecord();
  return Out;
}

void SessionTrace::add(const TraceEvent &E) {
  if (Record.Events.size() >= kMaxEvents) {
    ++Record.Dropped;
    return;
  }
  Record.Events.push_back(E);
}

void SessionTrace::arrived(const protocol::Header &H, const void *From,
                           uint64_t InBytes) {
  uint64_t Now = steadyNowNs();
  // Heartbeats are not requests: the client's timeline has none to pair.
  if (H.RequestId == protocol::kHeartbeatId)
    return;
  std::lock_guard<std::mutex> L(M);
  // Bounded like the events: a client that is never answered keeps no more.
  if (On && Arrivals.size() < kMaxEvents)
    Arrivals[{From, H.RequestId}] = {Now, InBytes};
}

void SessionTrace::answered(const protocol::Header &H, const void *From,
                            uint64_t OutBytes) {
  uint64_t Now = steadyNowNs();
  std::lock_guard<std::mutex> L(M);
  auto It = Arrivals.find({From, H.RequestId});
  if (!On || It == Arrivals.end())
    return;
  TraceEvent E;
  E.What = TraceEvent::Request;
  E.Type = static_cast<uint8_t>(H.Type);
  E.Queue = H.Queue;
  E.RequestId = H.RequestId;
  E.Thread = currentThreadId();
  E.StartNs = It->second.AtNs;
  E.DurationNs = Now - It->second.AtNs;
  E.Bytes = It->second.Bytes + OutBytes;
  Arrivals.erase(It);
  add(E);
}

void SessionTrace::kernel(const std::string &Name, uint64_t StartNs) {
  uint64_t Now = steadyNowNs();
  std::lock_guard<std::mutex> L(M);
  if (!On)
    return;
  auto [It, New] = NameIndex.try_emplace(Name, Record.Names.size());
  if (New)
    Record.Names.push_back(Name);
  TraceEvent E;
  E.What = TraceEvent::Kernel;
  E.Thread = currentThreadId();
  E.Name = It->second;
  E.StartNs = StartNs;
  E.DurationNs = Now - StartNs;
  add(E);
}

} // namespace ompdpu::server
