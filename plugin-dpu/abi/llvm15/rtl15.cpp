//===- rtl15.cpp - Optional entry points added by libomptarget 15 ---------===//
//
// libomptarget 15 and 16 look these up and use them when present. Not
// exported, on purpose: deinit_plugin, which 15 and 16 call at every
// library's unregistration (a dlclose'd library's too, while the program
// still offloads), so leaving the servers there would cut the program off;
// the unload destructor leaves them instead. And deinit_device, which
// neither version ever calls.
//
//===----------------------------------------------------------------------===//
#include "adapter.h"
#include "libomptarget_probe.h"
#include "omptarget_abi15.h"

using namespace ompdpu::abi;
using ompdpu::plugin::DpuPlugin;

extern "C" {
#pragma GCC visibility push(default)

int32_t __tgt_rtl_is_valid_binary(__tgt_device_image *Image);

/// Refuse, with a message, a libomptarget of another plugin ABI (it would
/// drop the plugin without a word); else connect to the servers. With none
/// reachable, number_of_devices says 0 and libomptarget drops the plugin.
int32_t __tgt_rtl_init_plugin() {
  if (!servesThisLibomptarget())
    return OFFLOAD_FAIL;
  DpuPlugin::get();
  return OFFLOAD_SUCCESS;
}

// CPU images carry no offload architecture: the ELF machine decides.
int32_t __tgt_rtl_is_valid_binary_info(__tgt_device_image *Image,
                                       __tgt_image_info *) {
  return __tgt_rtl_is_valid_binary(Image);
}

#pragma GCC visibility pop
} // extern "C"
