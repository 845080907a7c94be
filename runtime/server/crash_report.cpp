//===- crash_report.cpp - Tell the supervisor why a session died ----------===//
#include "server/crash_report.h"

#include "server/output_capture.h"

#include <csignal>
#include <cstring>
#include <initializer_list>
#include <unistd.h>

namespace ompdpu::server {
namespace {
int CrashFd = -1;
thread_local const char *CurrentKernel = nullptr;

void append(char *Buf, size_t &Len, size_t Cap, const char *S) {
  while (*S && Len + 1 < Cap)
    Buf[Len++] = *S++;
}

void onFatalSignal(int Sig) {
  // Only async-signal-safe calls here.
  char Buf[600];
  size_t Len = 0;
  append(Buf, Len, sizeof(Buf), "CRASH ");
  char Num[8];
  int N = 0, S = Sig;
  do {
    Num[N++] = static_cast<char>('0' + S % 10);
    S /= 10;
  } while (S && N < 7);
  while (N)
    Buf[Len++] = Num[--N];
  append(Buf, Len, sizeof(Buf), " ");
  append(Buf, Len, sizeof(Buf), CurrentKernel ? CurrentKernel : "-");
  append(Buf, Len, sizeof(Buf), "\n");
  if (CrashFd >= 0) {
    ssize_t Ignored = write(CrashFd, Buf, Len);
    (void)Ignored;
  }
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
