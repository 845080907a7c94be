//===- status.h - Errors as values ------------------------------*- C++ -*-===//
//
// Errors travel as values (in the style of llvm::Error / Expected) and turn
// into an int only at the libomptarget ABI or a process exit code.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace ompdpu {

/// The outcome of an operation: success, or a message saying what failed.
class Status {
public:
  /// Success.
  Status() = default;
  /// A failure with a human-readable reason.
  static Status error(std::string Msg) { return Status(std::move(Msg)); }
  /// True on success.
  bool ok() const { return !Failed; }
  explicit operator bool() const { return Failed; } // true when failed
  /// The reason of a failure (empty on success).
  const std::string &message() const { return Msg; }
  /// Prefix the reason with context ("cannot load image: " + reason).
  Status withContext(const std::string &Ctx) const {
    return Failed ? Status(Ctx + ": " + Msg) : Status();
  }

private:
  explicit Status(std::string M) : Failed(true), Msg(std::move(M)) {}
  bool Failed = false;
  std::string Msg;
};

/// A value of type T, or the Status that explains why there is none.
template <typename T> class Expected {
public:
  Expected(T Value) : V(std::move(Value)) {}
  Expected(Status S) : V(std::move(S)) {}
  /// True when a value is held.
  explicit operator bool() const { return V.index() == 0; }
  T &operator*() { return std::get<0>(V); }
  T *operator->() { return &std::get<0>(V); }
  /// The failure (only valid when no value is held).
  const Status &status() const { return std::get<1>(V); }

private:
  std::variant<T, Status> V;
};

} // namespace ompdpu
