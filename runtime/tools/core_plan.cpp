//===- core_plan.cpp - The cores of emulated DPUs and the program ---------===//
#include "tools/core_plan.h"

#include <algorithm>
#include <sched.h>

namespace ompdpu::tools {

std::vector<int> allowedCores() {
  cpu_set_t Set;
  CPU_ZERO(&Set);
  sched_getaffinity(0, sizeof(Set), &Set);
  std::vector<int> Out;
  for (int C = 0; C < CPU_SETSIZE; ++C)
    if (CPU_ISSET(C, &Set))
      Out.push_back(C);
  return Out;
}

CorePlan planCores(const std::vector<int> &Allowed, int Count,
                   int CoresPerDpu) {
  std::vector<int> All = Allowed;
  std::sort(All.begin(), All.end());
  int N = static_cast<int>(All.size());
  CorePlan P;
  if (N <= 1) {
    P.HostCores = All;
    P.DpuCores.assign(Count, All);
    P.Fits = false;
    return P;
  }
  int Per = CoresPerDpu > 0 ? CoresPerDpu : std::max(1, N / (Count + 1));
  if (Per * Count < N) {
    int Top = N;
    for (int K = 0; K < Count; ++K, Top -= Per)
      P.DpuCores.emplace_back(All.begin() + (Top - Per), All.begin() + Top);
    P.HostCores.assign(All.begin(), All.begin() + Top);
    return P;
  }
  // Too few cores: the DPUs share the top half (as the MPI ranks on them
  // would), so that none of them takes the program's cores.
  int Half = std::max(1, N / 2);
  std::vector<int> Side(All.end() - Half, All.end());
  P.DpuCores.assign(Count, Side);
  P.HostCores.assign(All.begin(), All.end() - Half);
  P.Fits = Count <= 1;
  return P;
}

CorePlan unpinnedPlan(const std::vector<int> &Allowed, int Count) {
  CorePlan P;
  P.HostCores = Allowed;
  P.DpuCores.assign(Count, {});
  P.Fits = false;
  return P;
}

static bool overlap(const std::vector<int> &A, const std::vector<int> &B) {
  for (int C : A)
    if (std::find(B.begin(), B.end(), C) != B.end())
      return true;
  return false;
}

std::vector<std::string> sharingOptions(const CorePlan &P, size_t K) {
  const std::vector<int> &Mine = P.DpuCores[K];
  if (Mine.empty() || overlap(Mine, P.HostCores))
    return {"--shared-cores", "--spin-us", "20"};
  for (size_t J = 0; J < P.DpuCores.size(); ++J)
    if (J != K && overlap(Mine, P.DpuCores[J]))
      return {"--shared-cores"};
  return {};
}

std::string joinCores(const std::vector<int> &Cores) {
  std::string S;
  for (int C : Cores)
    S += (S.empty() ? "" : ",") + std::to_string(C);
  return S;
}

} // namespace ompdpu::tools
