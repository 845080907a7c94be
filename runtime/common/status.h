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

/// What kind of failure a Status is, for code that must act on it; the
/// message is for people. The server's reply codes (protocol/messages.h)
/// arrive as the codes of the same name.
enum class ErrorCode {
  Generic,
  Invalid,      ///< a malformed or out-of-range request
  NoMemory,     ///< device memory limit reached
  Load,         ///< an image could not be loaded
  NotFound,     ///< unknown pointer, kernel or token
  Version,      ///< protocol version mismatch
  Internal,     ///< a server-side failure
  Peer,         ///< a peer session could not be reached
  OtherIsa,     ///< the server runs another ISA than the client wants
  Unreachable,  ///< no transport reaches the peer (UCX's "unreachable")
  PeerLost,     ///< the peer reset the connection or stopped answering
  Busy,         ///< the server serves as many sessions as it may
  Auth,         ///< authentication failed or the user is not allowed
  Forked,       ///< a connection used in a fork()ed child of its owner
  NotConnected, ///< the peer never took the connection (nothing listens)
};

/// The outcome of an operation: success, or a message saying what failed.
class Status {
public:
  /// Success.
  Status() = default;
  /// A failure with a human-readable reason.
  static Status error(std::string Msg) {
    return Status(ErrorCode::Generic, std::move(Msg));
  }
  /// A failure of a kind that callers may act on.
  static Status error(ErrorCode C, std::string Msg) {
    return Status(C, std::move(Msg));
  }
  /// True on success.
  bool ok() const { return !Failed; }
  explicit operator bool() const { return Failed; } // true when failed
  /// The reason of a failure (empty on success).
  const std::string &message() const { return Msg; }
  /// The kind of failure (Generic on success).
  ErrorCode code() const { return Code; }
  /// Prefix the reason with context ("cannot load image: " + reason).
  Status withContext(const std::string &Ctx) const {
    return Failed ? Status(Code, Ctx + ": " + Msg) : Status();
  }

private:
  Status(ErrorCode C, std::string M)
      : Failed(true), Code(C), Msg(std::move(M)) {}
  bool Failed = false;
  ErrorCode Code = ErrorCode::Generic;
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
