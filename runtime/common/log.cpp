//===- log.cpp - Messages in libomptarget's style -------------------------===//
#include "common/log.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <vector>

namespace ompdpu {
namespace {
std::string &prefix() {
  static std::string P = "ompdpu";
  return P;
}
const char *levelName(LogLevel L) {
  switch (L) {
  case LogLevel::Debug:
    return "debug";
  case LogLevel::Info:
    return "info";
  case LogLevel::Note:
    return "note";
  case LogLevel::Warning:
    return "warning";
  case LogLevel::Error:
    return "error";
  case LogLevel::Trace:
    return "trace";
  }
  return "?";
}
std::string vformat(const char *Fmt, va_list Args) {
  va_list Copy;
  va_copy(Copy, Args);
  int N = std::vsnprintf(nullptr, 0, Fmt, Copy);
  va_end(Copy);
  std::vector<char> Buf(N > 0 ? N + 1 : 1);
  std::vsnprintf(Buf.data(), Buf.size(), Fmt, Args);
  return std::string(Buf.data());
}
} // namespace

void setLogPrefix(const std::string &P) { prefix() = P; }

namespace {
FILE *LogStream = nullptr;
}
void setLogStream(FILE *F) { LogStream = F; }

std::string bootId() {
  std::ifstream F("/proc/sys/kernel/random/boot_id");
  std::string Id;
  std::getline(F, Id);
  return Id;
}

bool debugEnabled() {
  static const bool On = [] {
    const char *V = std::getenv("OMPDPU_DEBUG");
    return V && *V && std::string(V) != "0";
  }();
  return On;
}

std::string format(const char *Fmt, ...) {
  va_list Args;
  va_start(Args, Fmt);
  std::string S = vformat(Fmt, Args);
  va_end(Args);
  return S;
}

void log(LogLevel Level, const char *Fmt, ...) {
  va_list Args;
  va_start(Args, Fmt);
  std::string Msg = vformat(Fmt, Args);
  va_end(Args);
  // One write per line so that messages of concurrent threads do not mix.
  std::string Line = prefix() + " " + levelName(Level) + ": " + Msg + "\n";
  FILE *To = LogStream ? LogStream : stderr;
  std::fwrite(Line.data(), 1, Line.size(), To);
  std::fflush(To);
}

} // namespace ompdpu
