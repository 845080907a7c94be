//===- waiting_thread.cpp - How a host thread waits for a reply ----------===//
#include "client/waiting_thread.h"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace ompdpu::client {
namespace {

/// The kernel's struct sched_attr (its first version, 48 bytes, is all
/// that is read or written here); glibc has no wrapper before 2.41.
struct KernelSchedAttr {
  uint32_t Size;
  uint32_t Policy;
  uint64_t Flags;
  int32_t Nice;
  uint32_t Priority;
  uint64_t Runtime;
  uint64_t Deadline;
  uint64_t Period;
};
constexpr uint32_t kAttrSize = 48;
static_assert(sizeof(KernelSchedAttr) == kAttrSize);
constexpr uint64_t kResetOnFork = 0x01; // SCHED_FLAG_RESET_ON_FORK

bool getAttr(KernelSchedAttr &A) {
  A = KernelSchedAttr{};
  return syscall(SYS_sched_getattr, 0, &A, kAttrSize, 0) == 0;
}

} // namespace

void shortenSliceForWakeups(double Micros) {
  thread_local bool Tried = false;
  if (Tried || Micros <= 0)
    return;
  Tried = true;
  KernelSchedAttr A;
  if (!getAttr(A) || (A.Policy != SCHED_OTHER && A.Policy != SCHED_BATCH) ||
      A.Nice < 0)
    return;
  auto Nanos = static_cast<uint64_t>(Micros * 1e3);
  if (A.Runtime != 0 && A.Runtime <= Nanos)
    return;
  // The same policy and nice value. Reset-on-fork: threads it creates later
  // (an OpenMP team) start with the default slice; for a normal policy and
  // a nice value >= 0 it changes nothing else.
  A.Size = kAttrSize;
  A.Flags = kResetOnFork;
  A.Runtime = Nanos;
  syscall(SYS_sched_setattr, 0, &A, 0);
}

int64_t currentSliceNanos() {
  KernelSchedAttr A;
  return getAttr(A) ? static_cast<int64_t>(A.Runtime) : -1;
}

} // namespace ompdpu::client
