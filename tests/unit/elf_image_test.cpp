// Reading device images: ELF checks and the offload entry table.
#include "common/elf_image.h"

#include <cstring>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <vector>

using namespace ompdpu;

namespace {
std::vector<uint8_t> readFile(const char *Path) {
  std::ifstream F(Path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(F), {});
}
} // namespace

// OMPDPU_TEST_IMAGE is a shared object built by CMake with four entries in
// an omp_offloading_entries section; OMPDPU_TEST_NOENTRIES has none.
TEST(ElfImage, FindsTheEntrySection) {
  std::vector<uint8_t> Img = readFile(OMPDPU_TEST_IMAGE);
  ASSERT_GT(Img.size(), 64u);
  auto M = elfMachine(Img.data(), Img.size());
  ASSERT_TRUE(M);
  EXPECT_EQ(*M, kMachineX86_64);
  auto S = findEntrySection(Img.data(), Img.size());
  ASSERT_TRUE(S) << S.status().message();
  EXPECT_EQ(S->Size, 4 * kOffloadEntrySize);
  EXPECT_NE(S->Addr, 0u);
}

TEST(ElfImage, NoSectionMeansNoEntries) {
  std::vector<uint8_t> Img = readFile(OMPDPU_TEST_NOENTRIES);
  auto S = findEntrySection(Img.data(), Img.size());
  ASSERT_TRUE(S);
  EXPECT_EQ(S->Size, 0u);
}

TEST(ElfImage, RejectsWhatIsNotAnImage) {
  std::vector<uint8_t> Img = readFile(OMPDPU_TEST_IMAGE);
  EXPECT_FALSE(elfMachine(Img.data(), 10));
  std::vector<uint8_t> Bad = Img;
  Bad[0] = 'X';
  EXPECT_FALSE(elfMachine(Bad.data(), Bad.size()));
  Bad = Img;
  Bad[4] = 1; // 32-bit
  EXPECT_FALSE(elfMachine(Bad.data(), Bad.size()));
  Bad = Img;
  Bad[16] = 2; // ET_EXEC, not a shared object
  EXPECT_FALSE(elfMachine(Bad.data(), Bad.size()));
  std::vector<uint8_t> Text(4096, 'a');
  EXPECT_FALSE(findEntrySection(Text.data(), Text.size()));
}

TEST(ElfImage, CorruptSectionHeadersAreAnErrorNotACrash) {
  std::vector<uint8_t> Img = readFile(OMPDPU_TEST_IMAGE);
  // Point e_shoff far outside the file.
  uint64_t Off = ~0ull / 2;
  std::memcpy(Img.data() + 0x28, &Off, 8);
  EXPECT_FALSE(findEntrySection(Img.data(), Img.size()));
  // Random garbage after the ELF header must never crash libelf's reader.
  std::vector<uint8_t> G = readFile(OMPDPU_TEST_IMAGE);
  uint32_t Seed = 7;
  for (int K = 0; K < 200; ++K) {
    std::vector<uint8_t> Copy = G;
    for (int J = 0; J < 64; ++J) {
      Seed = Seed * 1664525 + 1013904223;
      Copy[64 + Seed % (Copy.size() - 64)] = static_cast<uint8_t>(Seed >> 24);
    }
    (void)findEntrySection(Copy.data(), Copy.size());
  }
}

TEST(ElfImage, IsaNames) {
  EXPECT_STREQ(isaName(kMachineAArch64), "aarch64");
  EXPECT_EQ(machineForIsa("aarch64"), kMachineAArch64);
  EXPECT_EQ(machineForIsa("x86_64"), kMachineX86_64);
  EXPECT_EQ(machineForIsa("riscv"), 0);
}
