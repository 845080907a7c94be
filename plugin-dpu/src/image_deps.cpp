//===- image_deps.cpp - Host-only dependencies of a device image ----------===//
#include "image_deps.h"

#include "common/log.h"

#include <cstring>
#include <elf.h>
#include <string_view>

namespace ompdpu::plugin {

namespace {
/// The file offset of virtual address Addr, from the PT_LOAD segments.
bool fileOffset(const Elf64_Phdr *Ph, size_t N, uint64_t Addr, uint64_t &Off) {
  for (size_t K = 0; K < N; ++K)
    if (Ph[K].p_type == PT_LOAD && Addr >= Ph[K].p_vaddr &&
        Addr < Ph[K].p_vaddr + Ph[K].p_filesz) {
      Off = Addr - Ph[K].p_vaddr + Ph[K].p_offset;
      return true;
    }
  return false;
}

bool isHostRuntime(std::string_view Name) {
  return Name.rfind("libomptarget.so", 0) == 0;
}
} // namespace

Expected<std::vector<uint8_t>> withoutHostRuntimeDeps(const void *Image,
                                                      size_t Size) {
  const auto *Bytes = static_cast<const uint8_t *>(Image);
  Elf64_Ehdr Eh;
  if (Size < sizeof(Eh) || std::memcmp(Bytes, ELFMAG, SELFMAG) != 0 ||
      Bytes[EI_CLASS] != ELFCLASS64 || Bytes[EI_DATA] != ELFDATA2LSB)
    return Status::error(ErrorCode::Load, "not a 64-bit little-endian ELF");
  std::memcpy(&Eh, Bytes, sizeof(Eh));
  if (Eh.e_phentsize != sizeof(Elf64_Phdr) || Eh.e_phoff > Size ||
      Eh.e_phnum > (Size - Eh.e_phoff) / sizeof(Elf64_Phdr))
    return Status::error(ErrorCode::Load, "program headers out of the image");
  std::vector<Elf64_Phdr> Ph(Eh.e_phnum);
  std::memcpy(Ph.data(), Bytes + Eh.e_phoff, Ph.size() * sizeof(Elf64_Phdr));
  const Elf64_Phdr *Dyn = nullptr;
  for (const Elf64_Phdr &P : Ph)
    if (P.p_type == PT_DYNAMIC)
      Dyn = &P;
  if (!Dyn)
    return std::vector<uint8_t>(); // static: no dependencies
  if (Dyn->p_offset > Size || Dyn->p_filesz > Size - Dyn->p_offset)
    return Status::error(ErrorCode::Load, "dynamic section out of the image");
  size_t N = Dyn->p_filesz / sizeof(Elf64_Dyn);
  std::vector<Elf64_Dyn> Entries(N);
  std::memcpy(Entries.data(), Bytes + Dyn->p_offset, N * sizeof(Elf64_Dyn));
  uint64_t StrAddr = 0, StrSize = 0, StrOff = 0;
  for (const Elf64_Dyn &D : Entries) {
    if (D.d_tag == DT_STRTAB)
      StrAddr = D.d_un.d_ptr;
    else if (D.d_tag == DT_STRSZ)
      StrSize = D.d_un.d_val;
  }
  if (!fileOffset(Ph.data(), Ph.size(), StrAddr, StrOff) || StrOff > Size ||
      StrSize > Size - StrOff)
    return Status::error(ErrorCode::Load, "string table out of the image");
  auto Name = [&](uint64_t Index) -> std::string_view {
    if (Index >= StrSize)
      return {};
    const char *S = reinterpret_cast<const char *>(Bytes + StrOff + Index);
    return std::string_view(S, strnlen(S, StrSize - Index));
  };
  // Drop the entries in place, as `patchelf --remove-needed` does: the
  // array keeps its size and ends with as many more DT_NULLs.
  std::vector<Elf64_Dyn> Kept;
  for (const Elf64_Dyn &D : Entries)
    if (!(D.d_tag == DT_NEEDED && isHostRuntime(Name(D.d_un.d_val))))
      Kept.push_back(D);
  if (Kept.size() == Entries.size())
    return std::vector<uint8_t>();
  OMPDPU_DEBUG_LOG("image: %zu host-only dependencies dropped",
                   Entries.size() - Kept.size());
  Kept.resize(N, Elf64_Dyn{DT_NULL, {0}});
  std::vector<uint8_t> Out(Bytes, Bytes + Size);
  std::memcpy(Out.data() + Dyn->p_offset, Kept.data(), N * sizeof(Elf64_Dyn));
  return Out;
}

} // namespace ompdpu::plugin
