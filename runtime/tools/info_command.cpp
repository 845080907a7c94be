//===- info_command.cpp - `ompdpu info` -----------------------------------===//
#include "tools/info_command.h"

#include "client/connection.h"
#include "common/config.h"
#include "common/device_map.h"
#include "common/log.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace ompdpu::tools {

namespace {

/// One DPU to probe and how to label it ("device 0", "n2 dpu 1").
struct Probe {
  std::string Label;
  DeviceAddress Address;
};

/// Handshakes with every DPU at once (silent ones cost one connect timeout);
/// prints one line each; returns how many did not answer.
int probeAll(const std::vector<Probe> &Probes, const ClientConfig &Cfg) {
  std::vector<Expected<std::unique_ptr<client::Connection>>> Started;
  auto Deadline = client::Connection::connectDeadline(Cfg);
  for (const Probe &P : Probes)
    Started.push_back(client::Connection::start(P.Address, Cfg));
  client::Connection::finishAll(Started, Deadline);
  int Bad = 0;
  for (size_t K = 0; K < Probes.size(); ++K) {
    const Probe &P = Probes[K];
    auto &C = Started[K];
    if (!C) {
      ++Bad;
      std::printf("  %-10s %-22s  unreachable: %s\n", P.Label.c_str(),
                  P.Address.text().c_str(), C.status().message().c_str());
      continue;
    }
    const client::ServerInfo &I = (*C)->info();
    std::printf("  %-10s %-22s  ready  isa %s  %u cores  %.1f GiB  host %s  "
                "protocol %u  plugin libomptarget.rtl.%s.so\n",
                P.Label.c_str(), P.Address.text().c_str(), I.Isa.c_str(),
                I.Cores, I.Memory / double(1ull << 30), I.Hostname.c_str(),
                I.Version, I.Isa.c_str());
  }
  return Bad;
}

/// Where the devices came from, in words.
std::string origin(const ClientConfig &Cfg, bool FromOption,
                   const EnvLookup &Env) {
  if (FromOption)
    return "--devices";
  if (!Cfg.DevicesFrom.empty())
    return Cfg.DevicesFrom +
           (Cfg.Hostname.empty() ? "" : ", for node '" + Cfg.Hostname + "'");
  std::string Tried;
  for (const std::string &F : deviceFileCandidates(Env))
    Tried += (Tried.empty() ? "" : ", ") + F;
  return "nowhere: OMPDPU_DEVICES unset, no devices file (tried " + Tried + ")";
}

/// Every node's DPUs of the devices file's cluster map, probed.
int probeCluster(const ClientConfig &Cfg) {
  if (Cfg.DevicesFrom.empty() || Cfg.DevicesFrom == "OMPDPU_DEVICES") {
    log(LogLevel::Error,
        "--cluster reads a devices file's cluster map; "
        "devices come from %s",
        Cfg.DevicesFrom.empty() ? "nowhere" : "OMPDPU_DEVICES");
    return 2;
  }
  std::ifstream F(Cfg.DevicesFrom);
  std::stringstream SS;
  SS << F.rdbuf();
  auto Map = parseDeviceMap(SS.str());
  if (!Map) {
    log(LogLevel::Error, "%s: %s", Cfg.DevicesFrom.c_str(),
        Map.status().message().c_str());
    return 2;
  }
  std::vector<Probe> Probes;
  for (const NodeDevices &N : Map->Nodes)
    for (size_t K = 0; K < N.Devices.size(); ++K)
      Probes.push_back({N.Node + " dpu " + std::to_string(K), N.Devices[K]});
  for (size_t K = 0; K < Map->Everywhere.size(); ++K)
    Probes.push_back({"all dpu " + std::to_string(K), Map->Everywhere[K]});
  std::printf("cluster map: %zu nodes, %zu DPUs\n", Map->Nodes.size(),
              Probes.size());
  int Bad = probeAll(Probes, Cfg);
  std::printf("%zu of %zu DPUs ready\n", Probes.size() - Bad, Probes.size());
  return Bad ? 1 : 0;
}

} // namespace

int cmdInfo(int Argc, char **Argv, const std::function<void()> &PrintPlugins) {
  bool FromOption = false, Cluster = false;
  for (int K = 0; K < Argc; ++K) {
    if (!std::strcmp(Argv[K], "--devices") && K + 1 < Argc) {
      setenv("OMPDPU_DEVICES", Argv[++K], 1);
      FromOption = true;
    } else if (!std::strcmp(Argv[K], "--devices")) {
      log(LogLevel::Error, "--devices needs HOST:PORT[,HOST:PORT...]");
      return 2;
    } else if (!std::strcmp(Argv[K], "--cluster")) {
      Cluster = true;
    } else {
      log(LogLevel::Error,
          "unknown option '%s' (usage: ompdpu info "
          "[--devices HOST:PORT,...] [--cluster])",
          Argv[K]);
      return 2;
    }
  }
  EnvLookup Env = [](const char *N) { return std::getenv(N); };
  auto Cfg = loadClientConfig(Env);
  if (!Cfg) {
    log(LogLevel::Error, "configuration: %s", Cfg.status().message().c_str());
    return 2;
  }
  if (Cluster)
    return probeCluster(*Cfg);
  PrintPlugins();
  std::printf("ompdpu devices (from %s)\n",
              origin(*Cfg, FromOption, Env).c_str());
  if (!Cfg->Share.empty())
    std::printf("this process: %s\n", Cfg->Share.c_str());
  std::printf("timeouts: connect %.1f s, response %.1f s, heartbeat %.1f s, "
              "kernel %s\n",
              Cfg->ConnectTimeout, Cfg->ResponseTimeout, Cfg->HeartbeatInterval,
              Cfg->KernelTimeout > 0
                  ? format("%.1f s", Cfg->KernelTimeout).c_str()
                  : "none");
  if (Cfg->Devices.empty()) {
    std::printf("no devices configured%s: OpenMP target regions run on the "
                "host\n",
                Cfg->NoDevicesReason.empty()
                    ? ""
                    : (" (" + Cfg->NoDevicesReason + ")").c_str());
    return 0;
  }
  std::vector<Probe> Probes;
  for (size_t K = 0; K < Cfg->Devices.size(); ++K)
    Probes.push_back({"device " + std::to_string(K), Cfg->Devices[K]});
  return probeAll(Probes, *Cfg) ? 1 : 0;
}

} // namespace ompdpu::tools
