//===- output_leftovers.cpp - What a dead session printed, unsent ---------===//
#include "server/output_leftovers.h"

#include "protocol/messages.h"
#include "server/output_ring.h"

#include <algorithm>
#include <string>
#include <sys/mman.h>

namespace ompdpu::server {

std::vector<std::vector<uint8_t>> leftoverOutputFrames(int OutputFd) {
  std::vector<std::vector<uint8_t>> Frames;
  if (OutputFd < 0)
    return Frames;
  void *Map =
      mmap(nullptr, sizeof(OutputArea), PROT_READ, MAP_SHARED, OutputFd, 0);
  if (Map == MAP_FAILED)
    return Frames;
  const auto *Area = static_cast<const OutputArea *>(Map);
  for (int S = 0; S < 2; ++S) {
    std::string Rest = unsentOutput(Area->Streams[S]);
    for (size_t At = 0; At < Rest.size(); At += protocol::Output::kMaxBytes) {
      size_t Len = std::min(protocol::Output::kMaxBytes, Rest.size() - At);
      Frames.push_back(protocol::outputFrame(static_cast<uint8_t>(S + 1),
                                             Rest.data() + At, Len));
    }
  }
  munmap(Map, sizeof(OutputArea));
  return Frames;
}

} // namespace ompdpu::server
