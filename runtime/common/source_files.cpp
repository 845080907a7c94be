//===- source_files.cpp - Which source file a symbol of an image came from ===//
#include "common/source_files.h"

#include <gelf.h>
#include <libelf.h>

#include <cstring>
#include <mutex>
#include <unordered_map>

namespace ompdpu {
namespace {
/// An object file's name (an LTO link's ld-temp.o) is not a source file.
bool isSourceName(const char *N) {
  size_t Len = N ? std::strlen(N) : 0;
  return Len > 0 && !(Len > 2 && std::strcmp(N + Len - 2, ".o") == 0);
}

/// Local symbol address -> its file, from one SHT_SYMTAB section.
void readSymtab(Elf *E, Elf_Scn *S, const GElf_Shdr &H,
                std::unordered_map<uint64_t, std::string> &Files) {
  Elf_Data *D = elf_getdata(S, nullptr);
  if (!D || !H.sh_entsize)
    return;
  size_t Count = H.sh_size / H.sh_entsize;
  const char *File = nullptr;
  for (size_t K = 0; K < Count; ++K) {
    GElf_Sym Sym;
    if (!gelf_getsym(D, static_cast<int>(K), &Sym))
      break;
    if (GELF_ST_TYPE(Sym.st_info) == STT_FILE) {
      File = elf_strptr(E, H.sh_link, Sym.st_name);
      continue;
    }
    if (GELF_ST_BIND(Sym.st_info) == STB_LOCAL && isSourceName(File)) {
      // The name as the user knows it: the path's last part.
      const char *Base = std::strrchr(File, '/');
      Files.emplace(Sym.st_value, Base ? Base + 1 : File);
    }
  }
}
} // namespace

std::vector<std::string> sourceFilesAt(const void *Image, size_t Size,
                                       const std::vector<uint64_t> &Addrs) {
  std::vector<std::string> Out(Addrs.size());
  static std::once_flag Once;
  std::call_once(Once, [] { elf_version(EV_CURRENT); });
  // The image was checked (findEntrySection) before it got here.
  Elf *E = elf_memory(static_cast<char *>(const_cast<void *>(Image)), Size);
  if (!E)
    return Out;
  std::unordered_map<uint64_t, std::string> Files;
  for (Elf_Scn *S = elf_nextscn(E, nullptr); S; S = elf_nextscn(E, S)) {
    GElf_Shdr H;
    if (gelf_getshdr(S, &H) && H.sh_type == SHT_SYMTAB && H.sh_offset <= Size &&
        H.sh_size <= Size - H.sh_offset)
      readSymtab(E, S, H, Files);
  }
  elf_end(E);
  for (size_t K = 0; K < Addrs.size(); ++K)
    if (auto It = Files.find(Addrs[K]); It != Files.end())
      Out[K] = It->second;
  return Out;
}

} // namespace ompdpu
