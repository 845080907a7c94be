//===- device_map.cpp - Which DPUs a process on a cluster node uses -------===//
#include "common/device_map.h"

#include "common/log.h"

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <unistd.h>

namespace ompdpu {

static bool validNodeName(const std::string &N) {
  if (N.empty() || N.size() > 253)
    return false;
  for (char C : N)
    if (!(std::isalnum(static_cast<unsigned char>(C)) || C == '-' || C == '.' ||
          C == '_'))
      return false;
  return true;
}

Expected<DeviceMap> parseDeviceMap(const std::string &Text) {
  DeviceMap Map;
  std::stringstream SS(Text);
  std::string Line;
  for (int LineNo = 1; std::getline(SS, Line); ++LineNo) {
    std::string Where = "line " + std::to_string(LineNo);
    Line = trimBlanks(Line.substr(0, Line.find('#')));
    if (Line.empty())
      continue;
    size_t Eq = Line.find('=');
    if (Eq == std::string::npos) {
      auto A = parseHostPort(Line);
      if (!A)
        return A.status().withContext(Where);
      Map.Everywhere.push_back(*A);
      continue;
    }
    NodeDevices N{trimBlanks(Line.substr(0, Eq)), {}};
    if (!validNodeName(N.Node))
      return Status::error(format("%s: '%s' is not a host name (NODE = "
                                  "HOST:PORT[, HOST:PORT...])",
                                  Where.c_str(), N.Node.c_str()));
    for (const NodeDevices &Seen : Map.Nodes)
      if (Seen.Node == N.Node)
        return Status::error(Where + ": node '" + N.Node + "' is listed twice");
    auto L = parseDeviceList(trimBlanks(Line.substr(Eq + 1)));
    if (!L)
      return L.status().withContext(Where + ": node '" + N.Node + "'");
    if (L->empty())
      return Status::error(Where + ": node '" + N.Node + "' lists no DPU");
    N.Devices = std::move(*L);
    Map.Nodes.push_back(std::move(N));
  }
  return Map;
}

const std::vector<DeviceAddress> *devicesOfNode(const DeviceMap &Map,
                                                const std::string &Hostname) {
  std::string Short = Hostname.substr(0, Hostname.find('.'));
  for (const NodeDevices &N : Map.Nodes)
    if (N.Node == Hostname)
      return &N.Devices;
  for (const NodeDevices &N : Map.Nodes)
    if (N.Node == Short || N.Node.substr(0, N.Node.find('.')) == Hostname)
      return &N.Devices;
  if (!Map.Everywhere.empty())
    return &Map.Everywhere;
  return nullptr;
}

/// A non-negative integer below 2^31 from variable Name; nullopt if unset.
static Expected<std::optional<unsigned>> counter(const EnvLookup &Env,
                                                 const char *Name) {
  const char *V = Env(Name);
  if (!V)
    return std::optional<unsigned>();
  errno = 0;
  char *End = nullptr;
  long N = std::strtol(V, &End, 10);
  if (!*V || *End || errno || N < 0 || N > INT_MAX)
    return Status::error(format("%s='%s' is not a rank number", Name, V));
  return std::optional<unsigned>(static_cast<unsigned>(N));
}

/// Slurm's tasks on node NodeId from SLURM_TASKS_PER_NODE ("2(x3),1").
static std::optional<unsigned> slurmTasksOnNode(const char *PerNode,
                                                unsigned NodeId) {
  std::stringstream SS(PerNode);
  std::string Item;
  unsigned Node = 0;
  while (std::getline(SS, Item, ',')) {
    unsigned Tasks = 0, Repeat = 1;
    if (std::sscanf(Item.c_str(), "%u(x%u)", &Tasks, &Repeat) < 1)
      return std::nullopt;
    if (NodeId < Node + Repeat)
      return Tasks;
    Node += Repeat;
  }
  return std::nullopt;
}

Expected<std::optional<LocalRank>> localRankFrom(const EnvLookup &Env) {
  struct Launcher {
    const char *Rank, *Size;
  } Launchers[] = {
      {"OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
      {"MPI_LOCALRANKID", "MPI_LOCALNRANKS"}, // MPICH's Hydra
  };
  for (const Launcher &L : Launchers) {
    auto Rank = counter(Env, L.Rank);
    auto Size = counter(Env, L.Size);
    if (!Rank)
      return Rank.status();
    if (!Size)
      return Size.status();
    if (!*Rank)
      continue;
    unsigned S = Size->value_or(1);
    if (**Rank >= S)
      return Status::error(
          format("%s=%u is not below %s=%u", L.Rank, **Rank, L.Size, S));
    return std::optional<LocalRank>(LocalRank{**Rank, S, L.Rank});
  }
  auto Rank = counter(Env, "SLURM_LOCALID");
  if (!Rank)
    return Rank.status();
  if (!*Rank)
    return std::optional<LocalRank>();
  auto NodeId = counter(Env, "SLURM_NODEID");
  if (!NodeId)
    return NodeId.status();
  const char *PerNode = Env("SLURM_TASKS_PER_NODE");
  std::optional<unsigned> S;
  if (PerNode)
    S = slurmTasksOnNode(PerNode, NodeId->value_or(0));
  if (!S || **Rank >= *S)
    return Status::error(format(
        "SLURM_LOCALID=%u does not fit SLURM_TASKS_PER_NODE='%s' on node %u",
        **Rank, PerNode ? PerNode : "", NodeId->value_or(0)));
  return std::optional<LocalRank>(LocalRank{**Rank, *S, "SLURM_LOCALID"});
}

std::vector<size_t> shareOfDevices(size_t N, const LocalRank &R) {
  std::vector<size_t> Out;
  if (N == 0 || R.Size == 0)
    return Out;
  if (N < R.Size) {
    Out.push_back(R.Rank % N);
    return Out;
  }
  for (size_t K = R.Rank * N / R.Size; K < (R.Rank + 1) * N / R.Size; ++K)
    Out.push_back(K);
  return Out;
}

std::string thisHostname() {
  char Name[HOST_NAME_MAX + 1] = {};
  if (gethostname(Name, sizeof(Name) - 1) != 0)
    return "";
  return Name;
}

} // namespace ompdpu
