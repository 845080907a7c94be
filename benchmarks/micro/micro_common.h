//===- micro_common.h - What the micro-benchmark programs share -----------===//
//
// ompdpu-offload-micro and ompdpu-launch-layers measure alike (the launch's
// layers are compared with the whole region) and split their command lines
// alike: their own arguments first, the rest for Google Benchmark.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <benchmark/benchmark.h>

#include <cstring>
#include <string>
#include <vector>

namespace micro {

/// --quick: shorter repetitions (CI).
inline bool Quick = false;

/// Repetitions and time per repetition for every benchmark. Wall-clock
/// time: a waiting host thread may sleep while the DPU side copies, so its
/// CPU time says nothing about the transfer.
inline benchmark::internal::Benchmark *
setup(benchmark::internal::Benchmark *B) {
  return B->Repetitions(7)
      ->ReportAggregatesOnly(true)
      ->MinTime(Quick ? 0.05 : 0.3)
      ->UseRealTime();
}

/// Take our own arguments (--quick; a bare word naming what to run, What
/// by default; whatever Own consumes: it returns how many arguments), hand
/// the rest to Google Benchmark, and return what to run.
template <typename OwnFn>
std::string parseArguments(int Argc, char **Argv, std::string What, OwnFn Own) {
  std::vector<char *> Rest = {Argv[0]};
  for (int I = 1; I < Argc; ++I) {
    if (!std::strcmp(Argv[I], "--quick"))
      Quick = true;
    else if (int Used = Own(Argc - I, Argv + I))
      I += Used - 1;
    else if (Argv[I][0] != '-')
      What = Argv[I];
    else
      Rest.push_back(Argv[I]);
  }
  int RestCount = static_cast<int>(Rest.size());
  benchmark::Initialize(&RestCount, Rest.data());
  return What;
}

inline std::string parseArguments(int Argc, char **Argv, std::string What) {
  return parseArguments(Argc, Argv, std::move(What),
                        [](int, char **) { return 0; });
}

} // namespace micro
