//===- fuzz_config.cpp - What users type and what scripts print -----------===//
//
// Device lists, device files (cluster maps too), timeouts and the server's
// readiness line: parsed or refused, never a crash.
//
//===----------------------------------------------------------------------===//
#include "common/byte_size.h"
#include "common/config.h"
#include "common/device_map.h"
#include "protocol/session_channel.h"
#include "server/options.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

using namespace ompdpu;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::string S(reinterpret_cast<const char *>(Data), Size);
  if (auto L = parseDeviceList(S))
    for (const DeviceAddress &A : *L)
      if (A.Port == 0)
        std::abort(); // a client never connects to port 0
  if (auto M = parseDeviceMap(S))
    for (const NodeDevices &N : M->Nodes)
      if (N.Devices.empty() || N.Node.empty())
        std::abort(); // every node line names a node and a DPU
  (void)parseHostPort(S, /*AllowPortZero=*/true);
  (void)parseSeconds("OMPDPU_TIMEOUT", S);
  (void)ompdpu::parseByteSize(S);
  if (auto Cores = server::parseCoreList(S))
    if (Cores->size() > 4096)
      std::abort(); // a core list names at most the machine's CPUs
  if (auto R = protocol::parseReadyLine(S)) {
    auto Again = protocol::parseReadyLine(protocol::formatReadyLine(*R));
    if (!Again || Again->address() != R->address())
      std::abort();
  }
  return 0;
}
