//===- session_leftovers.cpp - What a session leaves in /dev/shm ---------===//
#include "server/session_leftovers.h"

#include "transport/shm_files.h"

#include <cstdio>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ompdpu::server {

void removeLibompRegistration(pid_t Pid, uid_t Uid) {
  // libomp's __kmp_reg_status_name(): "__KMP_REGISTERED_LIB_<pid>_<uid>".
  char Name[64];
  std::snprintf(Name, sizeof Name, "/__KMP_REGISTERED_LIB_%d_%d",
                static_cast<int>(Pid), static_cast<int>(Uid));
  shm_unlink(Name); // ENOENT: the session never started libomp
}

size_t removeSharedMemoryFiles(const std::vector<std::string> &Files,
                               uid_t Uid) {
  size_t Removed = 0;
  for (const std::string &F : Files) {
    struct stat St;
    if (transport::isSharedMemoryFile(F) && lstat(F.c_str(), &St) == 0 &&
        S_ISREG(St.st_mode) && St.st_uid == Uid && unlink(F.c_str()) == 0)
      ++Removed;
  }
  return Removed;
}

} // namespace ompdpu::server
