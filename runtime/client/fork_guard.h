//===- fork_guard.h - Connections a fork()ed child inherited ----*- C++ -*-===//
//
// A child made by fork() holds copies of its parent's connections: the same
// UCX endpoints and shared-memory segments, the same session on the server.
// Used from the child they would take the parent's replies, and destroyed
// there they would tear down the parent's session. So a connection made
// before a fork refuses every request in the child and leaves its UCX
// resources untouched when the child destroys it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/status.h"

namespace ompdpu::client {

class ForkGuard {
public:
  /// The connection being made belongs to this process.
  ForkGuard();
  /// True in a process that fork() made after this guard was (no system
  /// call: a counter that a pthread_atfork handler raises in each child).
  bool inherited() const;
  /// Why a request in such a process fails.
  Status refusal() const;

private:
  unsigned Generation;
  int Owner;
};

} // namespace ompdpu::client
