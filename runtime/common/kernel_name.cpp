//===- kernel_name.cpp - A kernel named as its user wrote it --------------===//
#include "common/kernel_name.h"

#include <cctype>
#include <cstdlib>
#include <cxxabi.h>

namespace ompdpu {
namespace {
constexpr const char kPrefix[] = "__omp_offloading_";

bool isHex(const std::string &S, size_t From, size_t To) {
  if (From >= To)
    return false;
  for (size_t K = From; K < To; ++K)
    if (!std::isxdigit(static_cast<unsigned char>(S[K])))
      return false;
  return true;
}

std::string demangled(const std::string &Name) {
  int Status = 0;
  char *D = abi::__cxa_demangle(Name.c_str(), nullptr, nullptr, &Status);
  if (Status != 0 || !D)
    return Name;
  std::string Out = D;
  std::free(D);
  return Out;
}
} // namespace

RegionPlace regionPlace(const std::string &E) {
  RegionPlace P;
  const size_t N = sizeof(kPrefix) - 1;
  if (E.compare(0, N, kPrefix) != 0)
    return P;
  // Two hex ids, then the function, then _l<line>.
  size_t Dev = E.find('_', N);
  size_t File = Dev == std::string::npos ? Dev : E.find('_', Dev + 1);
  size_t L = E.rfind("_l");
  if (File == std::string::npos || L == std::string::npos || L <= File + 1 ||
      !isHex(E, N, Dev) || !isHex(E, Dev + 1, File) || L + 2 >= E.size())
    return P;
  unsigned long Line = 0;
  for (size_t K = L + 2; K < E.size(); ++K) {
    if (!std::isdigit(static_cast<unsigned char>(E[K])) || Line > 1u << 30)
      return P;
    Line = Line * 10 + (E[K] - '0');
  }
  P.Function = demangled(E.substr(File + 1, L - File - 1));
  P.Line = static_cast<unsigned>(Line);
  return P;
}

std::string kernelDisplayName(const std::string &EntryName,
                              const std::string &File) {
  RegionPlace P = regionPlace(EntryName);
  if (!P.Line)
    return EntryName;
  std::string Where = File.empty() ? "line " + std::to_string(P.Line)
                                   : File + ":" + std::to_string(P.Line);
  return P.Function + " (" + Where + ")";
}

} // namespace ompdpu
