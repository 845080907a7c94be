//===- connection_trace.cpp - A session's part of the timeline ------------===//
#include "client/connection.h"

#include "common/log.h"
#include "common/trace_time.h"

namespace ompdpu::client {

using namespace protocol;
using Clock = std::chrono::steady_clock;

namespace {
/// Round trips per clock sample: the shortest of them is kept.
constexpr int kClockRounds = 8;
/// The longest the session's events may take to arrive at the end.
constexpr auto kCollectTimeout = std::chrono::seconds(30);
} // namespace

ClockSample Connection::sampleSessionClock() {
  ClockSample Best;
  TraceControl Start;
  Start.Action = TraceAction::Start;
  for (int K = 0; K < kClockRounds; ++K) {
    ClockSample S;
    S.SentNs = static_cast<int64_t>(steadyNowNs());
    Ticket T = issue(MsgType::Trace, Start, 0, 0, nullptr, 0, Lane::Session);
    if (!waitUntil(T, Clock::now() + std::chrono::seconds(5)) ||
        !T->Result.ok())
      break;
    S.ReturnedNs = static_cast<int64_t>(steadyNowNs());
    S.SessionNs = static_cast<int64_t>(T->Value);
    keepBest(Best, S);
  }
  return Best;
}

void Connection::startSessionTrace() {
  Line->attached(LineDevice);
  TraceClockStart = sampleSessionClock();
  if (!TraceClockStart.valid())
    Line->sessionMissing(LineDevice, "the session did not start recording");
}

void Connection::collectSessionTrace() {
  if (TraceClockStart.valid() && alive()) {
    ClockSample End = sampleSessionClock();
    TraceControl Collect;
    Collect.Action = TraceAction::Collect;
    Ticket T = issue(MsgType::Trace, Collect, 0, 0, nullptr, 0, Lane::Session);
    TraceRecord R;
    Status S = waitUntil(T, Clock::now() + kCollectTimeout)
                   ? T->Result
                   : Status::error("no answer in time");
    if (S.ok())
      S = decodeTraceRecord(T->Payload.data(), T->Payload.size(), R);
    if (S.ok())
      Line->session(LineDevice, R, ClockMap(TraceClockStart, End));
    else
      Line->sessionMissing(LineDevice, S.message());
  } else if (TraceClockStart.valid()) {
    Line->sessionMissing(LineDevice, "the connection failed first");
  }
  if (Status S = Line->write(); !S.ok())
    log(LogLevel::Warning, "%s: %s", Addr.text().c_str(), S.message().c_str());
}

} // namespace ompdpu::client
