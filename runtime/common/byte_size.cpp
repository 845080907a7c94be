//===- byte_size.cpp - Sizes given on command lines -----------------------===//
#include "common/byte_size.h"

#include <cstdlib>

namespace ompdpu {

Expected<uint64_t> parseByteSize(const std::string &S) {
  if (S.empty())
    return Status::error("empty size");
  uint64_t Mult = 1;
  std::string Num = S;
  char Last = S.back();
  if (Last == 'K' || Last == 'k')
    Mult = 1ull << 10;
  else if (Last == 'M' || Last == 'm')
    Mult = 1ull << 20;
  else if (Last == 'G' || Last == 'g')
    Mult = 1ull << 30;
  else if (Last == 'T' || Last == 't')
    Mult = 1ull << 40;
  if (Mult != 1)
    Num.pop_back();
  bool Digits = !Num.empty() && Num.size() <= 18 &&
                Num.find_first_not_of("0123456789") == std::string::npos;
  unsigned long V = Digits ? std::strtoul(Num.c_str(), nullptr, 10) : 0;
  if (V == 0)
    return Status::error("bad size '" + S + "' (examples: 4096, 512M, 8G)");
  if (V > (~0ull) / Mult)
    return Status::error("size '" + S + "' is too large");
  return V * Mult;
}

} // namespace ompdpu
