//===- log.h - Messages in libomptarget's style -----------------*- C++ -*-===//
#pragma once

#include <cstdarg>
#include <cstdio>
#include <string>

namespace ompdpu {

/// Severity of a message written to stderr.
enum class LogLevel { Debug, Info, Note, Warning, Error, Trace };

/// Print "<prefix> <level>: <message>" to stderr, e.g. "ompdpu error: ...".
/// Trace: OMPDPU_TRACE's statistics ("ompdpu trace: ..."), not to be taken
/// for `ompdpu info`'s output.
/// Debug messages appear only when OMPDPU_DEBUG is set to a non-zero value.
void log(LogLevel Level, const char *Fmt, ...)
    __attribute__((format(printf, 2, 3)));

/// Set the prefix of every message ("ompdpu" in the plugin, "ompdpu-server"
/// in the server).
void setLogPrefix(const std::string &Prefix);
/// Where messages go (default: stderr): a session keeps its own there while
/// its stderr belongs to the kernels.
void setLogStream(std::FILE *F);

/// True when OMPDPU_DEBUG asks for debug messages.
bool debugEnabled();

/// This machine's kernel boot id (/proc/sys/kernel/random/boot_id), which
/// tells whether two processes share a machine; empty if unknown.
std::string bootId();

/// printf-style formatting into a std::string.
std::string format(const char *Fmt, ...) __attribute__((format(printf, 1, 2)));

} // namespace ompdpu

#define OMPDPU_DEBUG_LOG(...)                                                  \
  do {                                                                         \
    if (::ompdpu::debugEnabled())                                              \
      ::ompdpu::log(::ompdpu::LogLevel::Debug, __VA_ARGS__);                   \
  } while (0)
