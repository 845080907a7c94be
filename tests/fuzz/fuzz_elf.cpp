//===- fuzz_elf.cpp - Device images from an untrusted client --------------===//
//
// The server reads an image's ELF header and finds its entry section before
// it loads anything: whatever the bytes, an error or facts within bounds.
//
//===----------------------------------------------------------------------===//
#include "common/elf_image.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  auto Machine = ompdpu::elfMachine(Data, Size);
  auto Section = ompdpu::findEntrySection(Data, Size);
  if (Section && Section->Size % ompdpu::kOffloadEntrySize != 0)
    std::abort(); // a table of partial entries must be refused
  (void)Machine;
  return 0;
}
