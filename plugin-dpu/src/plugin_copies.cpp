//===- plugin_copies.cpp - What one plugin copy tells the other -----------===//
#include "plugin_copies.h"

#include <cstdlib>
#include <unistd.h>
#include <vector>

namespace ompdpu::plugin {

namespace {
/// The entries (lines) of variable Var set by this process.
std::vector<std::string> entries(const char *Var) {
  std::vector<std::string> Out;
  const char *V = std::getenv(Var);
  std::string S = V ? V : "";
  size_t End = S.find('\n');
  if (End == std::string::npos || S.substr(0, End) != std::to_string(getpid()))
    return Out; // unset, or left by the process we were forked from
  for (size_t At = End + 1; At < S.size();) {
    size_t Next = S.find('\n', At);
    if (Next == std::string::npos)
      Next = S.size();
    Out.push_back(S.substr(At, Next - At));
    At = Next + 1;
  }
  return Out;
}

void add(const char *Var, const std::string &Entry) {
  std::string S = std::to_string(getpid());
  for (const std::string &E : entries(Var))
    S += "\n" + E;
  setenv(Var, (S + "\n" + Entry).c_str(), 1);
}

const char *const kReported = "OMPDPU_INTERNAL_REPORTED";
const char *const kUnreachable = "OMPDPU_INTERNAL_UNREACHABLE";
} // namespace

bool firstToReport(const std::string &What) {
  for (const std::string &E : entries(kReported))
    if (E == What)
      return false;
  add(kReported, What);
  return true;
}

void noteUnreachable(const std::string &Addr, const std::string &Why) {
  std::string Line = Why;
  for (char &C : Line)
    if (C == '\n')
      C = ' ';
  add(kUnreachable, Addr + "\t" + Line);
}

std::optional<std::string> knownUnreachable(const std::string &Addr) {
  for (const std::string &E : entries(kUnreachable))
    if (E.compare(0, Addr.size() + 1, Addr + "\t") == 0)
      return E.substr(Addr.size() + 1);
  return std::nullopt;
}

} // namespace ompdpu::plugin
