//===- elf_image.h - Facts read from an OpenMP device image -----*- C++ -*-===//
#pragma once

#include "common/offload_entry.h"
#include "common/status.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace ompdpu {

/// ELF e_machine values of the ISAs a DPU server can run.
constexpr uint16_t kMachineX86_64 = 62;
constexpr uint16_t kMachineAArch64 = 183;

/// The ISA name a server reports for an e_machine ("x86_64", "aarch64").
const char *isaName(uint16_t Machine);
/// The e_machine for an ISA name; 0 if unknown.
uint16_t machineForIsa(const std::string &Isa);

/// The e_machine of a 64-bit little-endian ELF shared object, or an error
/// explaining why the bytes are not one.
Expected<uint16_t> elfMachine(const void *Image, size_t Size);

/// Where the offload entry table lies in the image's virtual addresses.
struct EntrySection {
  uint64_t Addr = 0; ///< sh_addr (add the load bias)
  uint64_t Size = 0; ///< sh_size in bytes
};

/// Find the section "omp_offloading_entries" (older clang:
/// ".omp_offloading.entries") with libelf. No such section: Size 0.
Expected<EntrySection> findEntrySection(const void *Image, size_t Size);

/// Size of one __tgt_offload_entry on a 64-bit target.
constexpr size_t kOffloadEntrySize = sizeof(__tgt_offload_entry);

} // namespace ompdpu
