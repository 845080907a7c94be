//===- session_log.h - A session's stderr, logged as its own ----*- C++ -*-===//
//
// A session's messages reach the server's log through a pipe the supervisor
// reads: each line is logged under the session's name, so a kernel that
// writes there can neither pose as the supervisor nor touch the log itself,
// and at most kMaxBytes of it are kept.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <string>

namespace ompdpu::server {

class SessionLog {
public:
  static constexpr size_t kMaxBytes = 256 * 1024;

  SessionLog() = default;
  SessionLog(int Fd, std::string Who) : Fd(Fd), Who(std::move(Who)) {}
  SessionLog(SessionLog &&O) noexcept { *this = std::move(O); }
  SessionLog &operator=(SessionLog &&O) noexcept;
  ~SessionLog() { close(); }

  /// Log the complete lines waiting in the pipe (non-blocking).
  void relay();
  /// Relay what is left, the last line even without its newline, and close.
  void close();

private:
  void logLine(const std::string &Line);
  int Fd = -1;
  std::string Who, Partial;
  size_t Logged = 0;
};

} // namespace ompdpu::server
