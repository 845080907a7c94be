//===- transport_list.cpp - Reading UCX_TLS lists -------------------------===//
#include "transport/transport_list.h"

#include <set>
#include <sstream>

namespace ompdpu::transport {

bool mayUseSharedMemory(const std::string &TransportList) {
  bool Excluding = !TransportList.empty() && TransportList[0] == '^';
  std::set<std::string> Names;
  std::istringstream In(TransportList.substr(Excluding ? 1 : 0));
  for (std::string Name; std::getline(In, Name, ',');) {
    if (!Name.empty() && Name[0] == '\\')
      Name.erase(0, 1);
    if (!Name.empty())
      Names.insert(Name);
  }
  auto Named = [&](const char *N) { return Names.count(N) != 0; };
  bool Group = Named("sm") || Named("shm") || Named("mm");
  if (Excluding)
    return !(Group || (Named("posix") && Named("sysv")));
  return Names.empty() || Named("all") || Group || Named("posix") ||
         Named("sysv");
}

} // namespace ompdpu::transport
