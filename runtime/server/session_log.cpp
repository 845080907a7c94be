//===- session_log.cpp - A session's stderr, logged as its own ------------===//
#include "server/session_log.h"

#include "common/log.h"

#include <unistd.h>

namespace ompdpu::server {

SessionLog &SessionLog::operator=(SessionLog &&O) noexcept {
  if (this != &O) {
    close();
    Fd = O.Fd;
    Who = std::move(O.Who);
    Partial = std::move(O.Partial);
    Logged = O.Logged;
    O.Fd = -1;
  }
  return *this;
}

void SessionLog::logLine(const std::string &Line) {
  if (Logged >= kMaxBytes)
    return;
  Logged += Line.size();
  if (Logged >= kMaxBytes) {
    log(LogLevel::Warning,
        "%s: more than %zu bytes of messages: the rest is "
        "not logged",
        Who.c_str(), kMaxBytes);
    return;
  }
  log(LogLevel::Note, "%s: %s", Who.c_str(), Line.c_str());
}

void SessionLog::relay() {
  if (Fd < 0)
    return;
  char Buf[4096];
  for (;;) {
    ssize_t N = ::read(Fd, Buf, sizeof Buf);
    if (N <= 0)
      break;
    Partial.append(Buf, static_cast<size_t>(N));
    size_t Start = 0;
    for (size_t End; (End = Partial.find('\n', Start)) != std::string::npos;
         Start = End + 1)
      logLine(Partial.substr(Start, End - Start));
    Partial.erase(0, Start);
    if (Partial.size() > 4096) { // a line without end: log it in pieces
      logLine(Partial);
      Partial.clear();
    }
  }
}

void SessionLog::close() {
  if (Fd < 0)
    return;
  relay();
  if (!Partial.empty())
    logLine(Partial);
  Partial.clear();
  ::close(Fd);
  Fd = -1;
}

} // namespace ompdpu::server
