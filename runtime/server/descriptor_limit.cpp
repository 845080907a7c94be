//===- descriptor_limit.cpp - How many files the server may hold open -----===//
#include "server/descriptor_limit.h"

#include <sys/resource.h>

namespace ompdpu::server {

uint64_t raiseDescriptorLimit() {
  struct rlimit R;
  if (getrlimit(RLIMIT_NOFILE, &R) != 0)
    return 0;
  if (R.rlim_cur < R.rlim_max) {
    struct rlimit Raised = {R.rlim_max, R.rlim_max};
    if (setrlimit(RLIMIT_NOFILE, &Raised) == 0)
      R = Raised;
  }
  return R.rlim_cur;
}

uint64_t sessionDescriptorLimit(uint64_t Wanted) {
  struct rlimit R;
  if (Wanted == 0 || getrlimit(RLIMIT_NOFILE, &R) != 0 ||
      R.rlim_max == RLIM_INFINITY || Wanted <= R.rlim_max)
    return Wanted;
  // Probe in a throwaway way: raising the hard limit needs CAP_SYS_RESOURCE.
  struct rlimit Try = {R.rlim_max, Wanted};
  if (setrlimit(RLIMIT_NOFILE, &Try) == 0) {
    setrlimit(RLIMIT_NOFILE, &R);
    return Wanted;
  }
  return R.rlim_max;
}

} // namespace ompdpu::server
