//===- fork_guard.cpp - Connections a fork()ed child inherited ------------===//
#include "client/fork_guard.h"

#include "common/log.h"

#include <atomic>
#include <mutex>
#include <pthread.h>
#include <unistd.h>

namespace ompdpu::client {

namespace {
/// fork()s between the first connection and this process.
std::atomic<unsigned> Forks{0};
void onChild() { Forks.fetch_add(1, std::memory_order_relaxed); }
} // namespace

ForkGuard::ForkGuard() : Owner(static_cast<int>(getpid())) {
  static std::once_flag Once;
  std::call_once(Once, [] { pthread_atfork(nullptr, nullptr, onChild); });
  Generation = Forks.load(std::memory_order_relaxed);
}

bool ForkGuard::inherited() const {
  return Forks.load(std::memory_order_relaxed) != Generation;
}

Status ForkGuard::refusal() const {
  return Status::error(
      ErrorCode::Forked,
      format("this process (%d) is a fork() of the one that connected (%d): "
             "the connection and its session are the parent's; offload from "
             "the parent, or exec a new program in the child",
             static_cast<int>(getpid()), Owner));
}

} // namespace ompdpu::client
