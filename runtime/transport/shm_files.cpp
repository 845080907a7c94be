//===- shm_files.cpp - UCX's POSIX shared memory files --------------------===//
#include "transport/shm_files.h"

#include <algorithm>
#include <fstream>

namespace ompdpu::transport {

namespace {
// uct_posix_file_name(): "ucx_shm_posix_<hex id>" in UCX_POSIX_DIR.
const std::string kPrefix = "/dev/shm/ucx_shm_posix_";
} // namespace

bool isSharedMemoryFile(const std::string &Path) {
  return Path.size() > kPrefix.size() && Path.size() < 128 &&
         !Path.compare(0, kPrefix.size(), kPrefix) &&
         Path.find_first_not_of("0123456789abcdef", kPrefix.size()) ==
             std::string::npos;
}

std::vector<std::string> sharedMemoryFiles() {
  std::vector<std::string> Files;
  std::ifstream Maps("/proc/self/maps");
  for (std::string Line; std::getline(Maps, Line);) {
    size_t At = Line.find(kPrefix);
    if (At == std::string::npos)
      continue;
    std::string Path = Line.substr(At);
    if (Path.size() > 10 && !Path.compare(Path.size() - 10, 10, " (deleted)"))
      continue; // unlinked already
    if (isSharedMemoryFile(Path) &&
        std::find(Files.begin(), Files.end(), Path) == Files.end())
      Files.push_back(Path);
  }
  return Files;
}

} // namespace ompdpu::transport
