//===- core_pinning.cpp - The cores a server and its sessions use ---------===//
#include "server/core_pinning.h"

#include "common/log.h"

#include <cerrno>
#include <cstring>
#include <sched.h>
#include <string>

namespace ompdpu::server {

namespace {

/// "0-3,6": the cores of a set, as --cores takes them.
std::string coreListText(const cpu_set_t &Set) {
  std::string Out;
  for (int C = 0; C < CPU_SETSIZE; ++C) {
    if (!CPU_ISSET(C, &Set))
      continue;
    int Last = C;
    while (Last + 1 < CPU_SETSIZE && CPU_ISSET(Last + 1, &Set))
      ++Last;
    Out += (Out.empty() ? "" : ",") + std::to_string(C) +
           (Last > C ? "-" + std::to_string(Last) : "");
    C = Last;
  }
  return Out;
}

} // namespace

Expected<unsigned> pinToCores(const std::vector<int> &Cores) {
  cpu_set_t Set;
  CPU_ZERO(&Set);
  if (!Cores.empty()) {
    cpu_set_t Allowed;
    CPU_ZERO(&Allowed);
    sched_getaffinity(0, sizeof(Allowed), &Allowed);
    for (int C : Cores) {
      if (C >= CPU_SETSIZE || !CPU_ISSET(C, &Allowed))
        return Status::error(
            format("--cores: core %d is not one this server may run on (it "
                   "may use %s)",
                   C, coreListText(Allowed).c_str()));
      CPU_SET(C, &Set);
    }
    if (sched_setaffinity(0, sizeof(Set), &Set) != 0)
      return Status::error(format("--cores: cannot pin to those cores: %s",
                                  std::strerror(errno)));
  }
  sched_getaffinity(0, sizeof(Set), &Set);
  return static_cast<unsigned>(CPU_COUNT(&Set));
}

} // namespace ompdpu::server
