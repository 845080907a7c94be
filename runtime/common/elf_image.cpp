//===- elf_image.cpp - Facts read from an OpenMP device image -------------===//
#include "common/elf_image.h"

#include "common/log.h"

#include <gelf.h>
#include <libelf.h>

#include <cstring>
#include <mutex>

namespace ompdpu {

const char *isaName(uint16_t Machine) {
  switch (Machine) {
  case kMachineX86_64:
    return "x86_64";
  case kMachineAArch64:
    return "aarch64";
  default:
    return "unknown";
  }
}

uint16_t machineForIsa(const std::string &Isa) {
  if (Isa == "x86_64")
    return kMachineX86_64;
  if (Isa == "aarch64")
    return kMachineAArch64;
  return 0;
}

Expected<uint16_t> elfMachine(const void *Image, size_t Size) {
  const auto *B = static_cast<const unsigned char *>(Image);
  if (!B || Size < 64)
    return Status::error(
        format("image of %zu bytes is too small for ELF", Size));
  if (std::memcmp(B,
                  "\x7f"
                  "ELF",
                  4) != 0)
    return Status::error("image is not an ELF file (bad magic)");
  if (B[4] != 2)
    return Status::error("image is not a 64-bit ELF file");
  if (B[5] != 1)
    return Status::error("image is not little-endian");
  uint16_t Type, Machine;
  std::memcpy(&Type, B + 16, 2);
  std::memcpy(&Machine, B + 18, 2);
  if (Type != 3 /*ET_DYN*/)
    return Status::error(format("image has ELF type %u, expected a shared "
                                "object (3)",
                                Type));
  return Machine;
}

Expected<EntrySection> findEntrySection(const void *Image, size_t Size) {
  static std::once_flag Once;
  std::call_once(Once, [] { elf_version(EV_CURRENT); });
  auto M = elfMachine(Image, Size);
  if (!M)
    return M.status();
  // libelf reads but does not modify the memory it is given.
  Elf *E = elf_memory(static_cast<char *>(const_cast<void *>(Image)), Size);
  if (!E)
    return Status::error(
        format("libelf cannot read image: %s", elf_errmsg(-1)));
  GElf_Ehdr EH;
  if (elf_kind(E) != ELF_K_ELF || !gelf_getehdr(E, &EH)) {
    elf_end(E);
    return Status::error(
        format("libelf cannot read image: %s", elf_errmsg(-1)));
  }
  // libelf trusts e_shoff; check that the section table lies in the image.
  if (EH.e_shoff > Size ||
      EH.e_shnum * uint64_t(EH.e_shentsize) > Size - EH.e_shoff) {
    elf_end(E);
    return Status::error("image is truncated or corrupt: its section header "
                         "table lies outside the file");
  }
  size_t StrIdx = 0;
  // An image without the section simply has no entries (empty images are
  // loaded for their constructors).
  Status Err;
  EntrySection Found;
  bool Ok = true;
  if (elf_getshdrstrndx(E, &StrIdx) != 0) {
    Ok = false;
    Err = Status::error(format("bad section header table: %s", elf_errmsg(-1)));
  } else {
    for (Elf_Scn *S = elf_nextscn(E, nullptr); S; S = elf_nextscn(E, S)) {
      GElf_Shdr H;
      if (!gelf_getshdr(S, &H))
        continue;
      const char *Name = elf_strptr(E, StrIdx, H.sh_name);
      if (!Name || (std::strcmp(Name, "omp_offloading_entries") != 0 &&
                    std::strcmp(Name, ".omp_offloading.entries") != 0))
        continue;
      if (H.sh_size % kOffloadEntrySize != 0) {
        Ok = false;
        Err =
            Status::error(format("entry section size %lu is not a multiple "
                                 "of %zu",
                                 (unsigned long)H.sh_size, kOffloadEntrySize));
        break;
      }
      Found.Addr = H.sh_addr;
      Found.Size = H.sh_size;
      break;
    }
  }
  elf_end(E);
  if (!Ok)
    return Err;
  return Found;
}

} // namespace ompdpu
