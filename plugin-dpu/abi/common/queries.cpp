//===- queries.cpp - ompdpu's own plugin queries, for every adapter -------===//
#include "queries.h"

#include <cstdio>

namespace ompdpu::abi {

namespace {
thread_local LastAllocation LastAlloc;

int32_t pluginCount() { return plugin::DpuPlugin::get().numDevices(); }
plugin::DpuDevice *pluginDevice(int32_t Id) {
  return plugin::DpuPlugin::get().device(Id);
}
/// Set before libomptarget asks for devices, read only afterwards.
DeviceNumbering Numbering{pluginCount, pluginDevice};
} // namespace

void noteAllocation(int32_t Id, void *Ptr) {
  LastAlloc.Device = Id;
  LastAlloc.Ptr = Ptr;
  ++LastAlloc.Count;
}

const LastAllocation &lastAllocation() { return LastAlloc; }

void useDeviceNumbering(DeviceNumbering N) { Numbering = N; }

} // namespace ompdpu::abi

using namespace ompdpu::abi;

// Exported by every plugin library (tgt_rtl/exports.map) and, for the
// plugins linked into libomptarget 19+, by libomptarget's version script.
extern "C" {
#pragma GCC visibility push(default)

/// Which device made the calling thread's last allocation, and at what
/// address: libompdpu uses it to map OpenMP device numbers to DPUs.
int32_t __ompdpu_plugin_last_alloc(int32_t *Id, void **Ptr, uint64_t *Count) {
  const LastAllocation &A = lastAllocation();
  *Id = A.Device;
  *Ptr = A.Ptr;
  *Count = A.Count;
  return A.Device >= 0;
}

/// Number of DPUs this plugin numbers.
int32_t __ompdpu_plugin_num_devices() { return Numbering.Count(); }

/// Device Id's server as "HOST:PORT" in Buf (Len bytes, cut short and
/// terminated if longer); 0 for no such device.
int32_t __ompdpu_plugin_device_address(int32_t Id, char *Buf, uint64_t Len) {
  ompdpu::plugin::DpuDevice *D = Numbering.Device(Id);
  if (!D || !Buf || Len == 0)
    return 0;
  std::snprintf(Buf, Len, "%s", D->address().c_str());
  return 1;
}

#pragma GCC visibility pop
} // extern "C"
