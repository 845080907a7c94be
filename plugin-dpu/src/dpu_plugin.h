//===- dpu_plugin.h - The set of DPUs this plugin drives --------*- C++ -*-===//
#pragma once

#include "dpu_device.h"

#include <memory>
#include <string>
#include <vector>

namespace ompdpu::plugin {

/// All devices of this plugin instance, connected once, at first use.
class DpuPlugin {
public:
  /// The process-wide instance (created and connected on first call).
  static DpuPlugin &get();
  /// Number of connected devices.
  int32_t numDevices() const { return static_cast<int32_t>(Devices.size()); }
  /// Device by plugin-local id, or null.
  DpuDevice *device(int32_t Id) {
    return Id >= 0 && Id < numDevices() ? Devices[Id].get() : nullptr;
  }
  /// True when some device runs images of this ELF machine.
  bool acceptsMachine(uint16_t Machine) const;
  /// An image of this machine found no device: say which ISA the DPUs run
  /// (once per process; libomptarget drops a copy without devices before
  /// it is shown any image, so only a copy with devices can tell).
  void explainRefusedImage(uint16_t Machine) const;
  /// The ISA this copy of the plugin serves: the one its library was built
  /// for (setLibraryIsa), else its file name's (libomptarget.rtl.<isa>.so);
  /// empty: any.
  const std::string &isa() const { return Isa; }
  /// Serve Isa whatever the library's file name says (a name libomptarget
  /// loads that names no ISA, as 18's libomptarget.rtl.cuda.so); called
  /// when the library is loaded, before the first get().
  static void setLibraryIsa(const char *Isa);
  /// Say goodbye to every server (at unload); later calls find no device.
  void shutdown() { Devices.clear(); }
  /// Flags passed to init_requires.
  int64_t RequiresFlags = 0;

private:
  DpuPlugin();
  void connectAll();
  std::string Isa;
  std::vector<std::unique_ptr<DpuDevice>> Devices;
};

} // namespace ompdpu::plugin
