//===- libomp_registration.cpp - What libomp leaves of a session ----------===//
#include "server/libomp_registration.h"

#include <cstdio>
#include <sys/mman.h>

namespace ompdpu::server {

void removeLibompRegistration(pid_t Pid, uid_t Uid) {
  // libomp's __kmp_reg_status_name(): "__KMP_REGISTERED_LIB_<pid>_<uid>".
  char Name[64];
  std::snprintf(Name, sizeof Name, "/__KMP_REGISTERED_LIB_%d_%d",
                static_cast<int>(Pid), static_cast<int>(Uid));
  shm_unlink(Name); // ENOENT: the session never started libomp
}

} // namespace ompdpu::server
