//===- host_entries.h - An image's host entries, for every adapter -*- C++
//-*-===//
#pragma once

#include "dpu_device.h"

#include <vector>

namespace ompdpu::abi {

/// The host entries from Begin to End (libomptarget's __tgt_offload_entry,
/// whichever version declares it: name, size, flags), in the order the
/// device's entries must match.
template <typename Entry>
std::vector<plugin::HostEntry> hostEntries(const Entry *Begin,
                                           const Entry *End) {
  std::vector<plugin::HostEntry> Host;
  Host.reserve(End - Begin);
  for (const Entry *E = Begin; E != End; ++E)
    Host.push_back({E->name ? E->name : "", E->size, E->flags});
  return Host;
}

} // namespace ompdpu::abi
