//===- stop_signals.cpp - The supervisor's signals, as a descriptor -------===//
#include "server/stop_signals.h"

#include <atomic>
#include <csignal>
#include <fcntl.h>
#include <initializer_list>
#include <unistd.h>

namespace ompdpu::server {
namespace {
int Pipe[2] = {-1, -1};
// Lock-free atomics are async-signal-safe and ordered between threads; a
// sig_atomic_t is only the former.
std::atomic<bool> Stop{false};
static_assert(std::atomic<bool>::is_always_lock_free);

void onSignal(int Sig) {
  if (Sig != SIGCHLD)
    Stop.store(true);
  char C = static_cast<char>(Sig);
  ssize_t Ignored = write(Pipe[1], &C, 1);
  (void)Ignored;
}
} // namespace

bool installStopSignals() {
  if (Pipe[0] < 0 && pipe2(Pipe, O_CLOEXEC | O_NONBLOCK) != 0)
    return false;
  struct sigaction SA {};
  SA.sa_handler = onSignal;
  SA.sa_flags = SA_RESTART;
  for (int Sig : {SIGCHLD, SIGTERM, SIGINT, SIGHUP})
    sigaction(Sig, &SA, nullptr);
  signal(SIGPIPE, SIG_IGN);
  return true;
}

int signalFd() { return Pipe[0]; }

void drainSignals() {
  char Drain[64];
  while (read(Pipe[0], Drain, sizeof(Drain)) > 0) {
  }
}

bool stopRequested() { return Stop.load(); }

} // namespace ompdpu::server
