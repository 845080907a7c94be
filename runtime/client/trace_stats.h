//===- trace_stats.h - OMPDPU_TRACE's summary of requests --------*- C++
//-*-===//
#pragma once

#include "common/log.h"
#include "protocol/messages.h"

#include <array>
#include <string>
#include <utility>

namespace ompdpu::client {

/// Per message type: requests completed and their total time from issue to
/// completion.
class TraceStats {
public:
  void add(protocol::MsgType T, double Micros) {
    auto &S = Slots[static_cast<unsigned>(T)];
    S.first += Micros;
    ++S.second;
  }
  unsigned long count(protocol::MsgType T) const {
    return Slots[static_cast<unsigned>(T)].second;
  }
  /// One log line per type seen, for the device named Device.
  void report(const std::string &Device) const {
    for (unsigned K = 0; K < Slots.size(); ++K)
      if (Slots[K].second)
        log(LogLevel::Trace,
            "%s: %s: %lu requests, %.2f us from issue to completion on "
            "average",
            Device.c_str(),
            protocol::typeName(static_cast<protocol::MsgType>(K)),
            Slots[K].second, Slots[K].first / Slots[K].second);
  }

private:
  static_assert(static_cast<unsigned>(protocol::MsgType::Last) < 32);
  std::array<std::pair<double, unsigned long>, 32> Slots{};
};

} // namespace ompdpu::client
