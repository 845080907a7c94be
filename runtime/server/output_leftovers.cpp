//===- output_leftovers.cpp - What a dead session printed, unsent ---------===//
#include "server/output_leftovers.h"

#include "protocol/messages.h"
#include "server/output_ring.h"

#include <algorithm>
#include <string>
#include <sys/mman.h>

namespace ompdpu::server {

std::vector<std::vector<uint8_t>>
leftoverOutputFrames(int OutputFd, const std::string (&Raw)[2]) {
  std::vector<std::vector<uint8_t>> Frames;
  void *Map = OutputFd < 0 ? MAP_FAILED
                           : mmap(nullptr, sizeof(OutputArea), PROT_READ,
                                  MAP_SHARED, OutputFd, 0);
  const auto *Area =
      Map == MAP_FAILED ? nullptr : static_cast<const OutputArea *>(Map);
  for (int S = 0; S < 2; ++S) {
    UnsentOutput Rest;
    if (Area)
      Rest = unsentOutput(Area->Streams[S]);
    // The raw bytes follow the ring's in the stream.
    std::string B = Rest.Bytes + Raw[S];
    for (size_t At = 0; At < B.size(); At += protocol::Output::kMaxBytes) {
      size_t Len = std::min(protocol::Output::kMaxBytes, B.size() - At);
      uint64_t Offset =
          Rest.Trusted ? Rest.From + At : protocol::Output::kNotInStream;
      Frames.push_back(protocol::outputFrame(static_cast<uint8_t>(S + 1),
                                             Offset, B.data() + At, Len));
    }
  }
  if (Area)
    munmap(Map, sizeof(OutputArea));
  return Frames;
}

} // namespace ompdpu::server
