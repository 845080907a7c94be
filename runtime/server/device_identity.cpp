//===- device_identity.cpp - The device a session's kernels run on --------===//
#include "server/device_identity.h"

#include <atomic>

namespace ompdpu::server {

namespace {
// Read from kernels' threads while the loop thread may load another image.
std::atomic<int32_t> Num{0};
std::atomic<int32_t> Count{1};
} // namespace

void setDeviceIdentity(DeviceIdentity D) {
  Num.store(D.Num, std::memory_order_relaxed);
  Count.store(D.Count, std::memory_order_relaxed);
}

DeviceIdentity deviceIdentity() {
  return {Num.load(std::memory_order_relaxed),
          Count.load(std::memory_order_relaxed)};
}

} // namespace ompdpu::server
