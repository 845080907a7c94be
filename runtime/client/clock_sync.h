//===- clock_sync.h - A session's clock in terms of ours --------*- C++ -*-===//
//
// A session stamps its events with its own steady clock: on a real DPU
// another machine's. Round trips that return the session's clock give
// samples (its time against the midpoint of ours, good to half the round
// trip); the shortest of a few is kept at the start and at the end, and
// times in between map through the straight line joining the two, which
// takes out the clocks' drift as well as their offset.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace ompdpu::client {

/// One round trip: ours when it left and when it returned, and the
/// session's as it answered, in ns.
struct ClockSample {
  int64_t SentNs = 0, ReturnedNs = 0, SessionNs = 0;
  int64_t roundTrip() const { return ReturnedNs - SentNs; }
  /// Session time minus ours at the same instant, at best.
  int64_t offset() const {
    return SessionNs - (SentNs + (ReturnedNs - SentNs) / 2);
  }
  bool valid() const { return ReturnedNs >= SentNs && SentNs != 0; }
};

/// Keeps the sample with the shortest round trip.
inline void keepBest(ClockSample &Best, const ClockSample &S) {
  if (S.valid() && (!Best.valid() || S.roundTrip() < Best.roundTrip()))
    Best = S;
}

class ClockMap {
public:
  ClockMap() = default;
  /// From two samples (Last may be invalid: the offset is then constant).
  ClockMap(const ClockSample &First, const ClockSample &Last)
      : A(First), B(Last) {}
  bool valid() const { return A.valid(); }
  /// Our time for a session time.
  int64_t toClient(int64_t SessionNs) const {
    if (!B.valid() || B.SessionNs == A.SessionNs)
      return SessionNs - A.offset();
    double F =
        double(SessionNs - A.SessionNs) / double(B.SessionNs - A.SessionNs);
    return SessionNs -
           int64_t(A.offset() + F * double(B.offset() - A.offset()));
  }
  /// How far a mapped time may be off: half the longer round trip.
  int64_t uncertaintyNs() const {
    int64_t R = A.roundTrip();
    if (B.valid() && B.roundTrip() > R)
      R = B.roundTrip();
    return R / 2 + 1;
  }

private:
  ClockSample A, B;
};

} // namespace ompdpu::client
