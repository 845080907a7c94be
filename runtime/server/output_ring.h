//===- output_ring.h - What a session's kernels wrote, not yet sent -------===//
//
// A session's stdout and stderr bytes wait in two rings in memory shared
// with the supervisor, so that what a kernel printed before it crashed (or
// before the session was killed) still reaches the client: the supervisor
// sends the unsent rest with the session's exit. The rings are bounded: a
// kernel that prints faster than the client takes its output waits.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace ompdpu::server {

/// Bytes of one stream's ring.
constexpr size_t kOutputRingBytes = 1 << 20;

/// One stream's ring: Head and Tail count bytes sent and written since the
/// session started (Tail - Head bytes wait, at Head % kOutputRingBytes).
struct OutputRing {
  std::atomic<uint64_t> Head{0};
  std::atomic<uint64_t> Tail{0};
  char Pad[48];
  char Data[kOutputRingBytes];
};

/// The shared area: stdout's ring, then stderr's.
struct OutputArea {
  OutputRing Streams[2];
};

/// The bytes waiting in a ring and where they start in the stream.
struct UnsentOutput {
  bool Trusted = false; ///< the ring was consistent (From is its Head)
  uint64_t From = 0;
  std::string Bytes;
};

/// What waits in a ring, read by the supervisor once the session is gone;
/// a ring the session left inconsistent (it ran other people's code) gives
/// what can be trusted of it: nothing.
inline UnsentOutput unsentOutput(const OutputRing &R) {
  uint64_t Head = R.Head.load(std::memory_order_acquire);
  uint64_t Tail = R.Tail.load(std::memory_order_acquire);
  if (Tail < Head || Tail - Head > kOutputRingBytes)
    return {};
  UnsentOutput Out{true, Head, {}};
  Out.Bytes.reserve(Tail - Head);
  for (uint64_t K = Head; K < Tail; ++K)
    Out.Bytes += R.Data[K % kOutputRingBytes];
  return Out;
}

} // namespace ompdpu::server
