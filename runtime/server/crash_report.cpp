//===- crash_report.cpp - Tell the supervisor why a session died ----------===//
#include "server/crash_report.h"

#include "protocol/session_channel.h"
#include "server/output_capture.h"

#include <csignal>
#include <cstring>
#include <initializer_list>
#include <sys/socket.h>
#include <unistd.h>

namespace ompdpu::server {
namespace {
int CrashFd = -1;
thread_local const char *CurrentKernel = nullptr;

void onFatalSignal(int Sig) {
  // Only async-signal-safe calls here.
  static uint8_t Buf[protocol::kMaxChannelFrame];
  size_t Len = protocol::encodeCrashFrame(Buf, Sig, CurrentKernel);
  if (CrashFd >= 0) {
    ssize_t Ignored = send(CrashFd, Buf, Len, MSG_NOSIGNAL);
    (void)Ignored;
  }
  // Raw writes still in the pipes go first; what a thread took from them
  // reaches a ring while we wait.
  OutputCapture::forwardUnpumped(CrashFd);
  OutputCapture::waitForHandOver();
  // SA_RESETHAND restored the default action: die of the same signal.
  raise(Sig);
}
} // namespace

void setCurrentKernel(const char *Name) { CurrentKernel = Name; }

void installCrashReporter(int ControlFd) {
  CrashFd = ControlFd;
  struct sigaction SA;
  std::memset(&SA, 0, sizeof(SA));
  SA.sa_handler = onFatalSignal;
  SA.sa_flags = SA_RESETHAND | SA_NODEFER;
  sigemptyset(&SA.sa_mask);
  for (int Sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT})
    sigaction(Sig, &SA, nullptr);
}

} // namespace ompdpu::server
