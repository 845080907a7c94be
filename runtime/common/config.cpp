//===- config.cpp - Client configuration from the environment -------------===//
#include "common/config.h"

#include "common/device_map.h"

#include "common/host_port.h"
#include "common/log.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace ompdpu {

std::string DeviceAddress::text() const { return hostPortText(Host, Port); }

std::string trimBlanks(const std::string &S) {
  size_t B = S.find_first_not_of(" \t\r\n");
  if (B == std::string::npos)
    return "";
  return S.substr(B, S.find_last_not_of(" \t\r\n") - B + 1);
}

Expected<DeviceAddress> parseHostPort(const std::string &Item,
                                      bool AllowPortZero) {
  DeviceAddress A;
  std::string Port;
  if (!Item.empty() && Item[0] == '[') {
    size_t Close = Item.find(']');
    if (Close == std::string::npos || Close + 1 >= Item.size() ||
        Item[Close + 1] != ':')
      return Status::error("expected [ipv6]:port, got '" + Item + "'");
    A.Host = Item.substr(1, Close - 1);
    Port = Item.substr(Close + 2);
  } else {
    size_t Colon = Item.rfind(':');
    if (Colon == std::string::npos || Colon == 0)
      return Status::error("expected host:port, got '" + Item + "'");
    A.Host = Item.substr(0, Colon);
    if (A.Host.find(':') != std::string::npos)
      return Status::error("IPv6 addresses need brackets: '" + Item + "'");
    Port = Item.substr(Colon + 1);
  }
  if (A.Host.empty() || Port.empty() || Port.size() > 5 ||
      Port.find_first_not_of("0123456789") != std::string::npos)
    return Status::error("bad port in '" + Item + "'");
  unsigned long P = std::strtoul(Port.c_str(), nullptr, 10);
  if ((P == 0 && !AllowPortZero) || P > 65535)
    return Status::error("port out of range (1-65535) in '" + Item + "'");
  A.Port = static_cast<uint16_t>(P);
  return A;
}

Expected<std::vector<DeviceAddress>> parseDeviceList(const std::string &S) {
  std::vector<DeviceAddress> Out;
  std::stringstream SS(S);
  std::string Item;
  while (std::getline(SS, Item, ',')) {
    Item = trimBlanks(Item);
    if (Item.empty())
      return Status::error("empty item in device list '" + S + "'");
    auto A = parseHostPort(Item);
    if (!A)
      return A.status();
    Out.push_back(*A);
  }
  return Out;
}

Expected<double> parseSeconds(const char *Name, const std::string &Value,
                              double Min, const char *Unit) {
  errno = 0;
  char *End = nullptr;
  double D = std::strtod(Value.c_str(), &End);
  if (Value.empty() || errno || *End != '\0' || !std::isfinite(D) || D < Min)
    return Status::error(format("%s='%s' is not a number of %s >= %g", Name,
                                Value.c_str(), Unit, Min));
  return D;
}

static bool readFile(const std::string &Path, std::string &Out) {
  std::ifstream F(Path);
  if (!F)
    return false;
  std::stringstream SS;
  SS << F.rdbuf();
  Out = SS.str();
  return true;
}

std::vector<std::string> deviceFileCandidates(const EnvLookup &Env) {
  if (const char *V = Env("OMPDPU_CONFIG"))
    return {V};
  std::vector<std::string> Files;
  if (const char *X = Env("XDG_CONFIG_HOME"))
    Files.push_back(std::string(X) + "/ompdpu/devices");
  else if (const char *H = Env("HOME"))
    Files.push_back(std::string(H) + "/.config/ompdpu/devices");
  Files.push_back("/etc/ompdpu/devices");
  return Files;
}

/// Take this process's share of its node's DPUs (C.NodeDevices) as
/// OMPDPU_DEVICE_SHARE says, else as Default does.
static Status shareNodeDevices(const EnvLookup &Env, ClientConfig &C,
                               const char *Default) {
  C.Devices = C.NodeDevices;
  const char *Given = Env("OMPDPU_DEVICE_SHARE");
  std::string Mode = Given && *Given ? Given : Default;
  if (Mode == "all")
    return Status();
  if (Mode != "local-rank")
    return Status::error(
        "OMPDPU_DEVICE_SHARE must be local-rank or all, not '" + Mode + "'");
  auto R = localRankFrom(Env);
  if (!R)
    return R.status();
  if (!*R || C.NodeDevices.empty())
    return Status();
  C.Devices.clear();
  std::string Which;
  for (size_t K : shareOfDevices(C.NodeDevices.size(), **R)) {
    C.Devices.push_back(C.NodeDevices[K]);
    Which += (Which.empty() ? "" : ",") + std::to_string(K);
  }
  C.Share =
      format("local rank %u of %u (%s): DPU %s of the node's %zu%s", (*R)->Rank,
             (*R)->Size, (*R)->From, Which.c_str(), C.NodeDevices.size(),
             C.NodeDevices.size() < (*R)->Size ? ", shared" : "");
  return Status();
}

/// The first devices file that exists, read for node Hostname.
static Expected<ClientConfig>
loadDevicesFile(const EnvLookup &Env, std::string Hostname, ClientConfig &C) {
  std::vector<std::string> Files = deviceFileCandidates(Env);
  for (size_t K = 0; K < Files.size(); ++K) {
    std::string Text;
    if (!readFile(Files[K], Text)) {
      if (K == 0 && Env("OMPDPU_CONFIG"))
        return Status::error("cannot read OMPDPU_CONFIG file '" + Files[K] +
                             "'");
      continue;
    }
    auto Map = parseDeviceMap(Text);
    if (!Map)
      return Map.status().withContext(Files[K]);
    C.DevicesFrom = Files[K];
    C.Hostname = Hostname.empty() ? thisHostname() : Hostname;
    if (const auto *Mine = devicesOfNode(*Map, C.Hostname))
      C.NodeDevices = *Mine;
    else
      C.NoDevicesReason = format("%s lists no DPU for this node ('%s') and "
                                 "none for every node",
                                 Files[K].c_str(), C.Hostname.c_str());
    if (Status S = shareNodeDevices(Env, C, "local-rank"))
      return S;
    return C;
  }
  return C;
}

TraceSetting traceSetting(const EnvLookup &Env) {
  TraceSetting T;
  const char *V = Env("OMPDPU_TRACE");
  if (!V || !*V || !std::strcmp(V, "0"))
    return T;
  T.Summary = true;
  bool Number = true;
  for (const char *C = V; *C; ++C)
    Number = Number && std::isdigit(static_cast<unsigned char>(*C));
  if (Number)
    return T;
  T.File = V;
  for (size_t At; (At = T.File.find("%p")) != std::string::npos;)
    T.File.replace(At, 2, std::to_string(getpid()));
  return T;
}

Expected<ClientConfig> loadClientConfig(const EnvLookup &Env,
                                        const std::string &Hostname) {
  ClientConfig C;
  // A connect or a heartbeat needs some time: 0 would fail every connect
  // and ping the server without pause.
  struct {
    const char *Name;
    double *Field;
    double Min;
    const char *Unit;
  } Numbers[] = {
      {"OMPDPU_CONNECT_TIMEOUT", &C.ConnectTimeout, 0.001, "seconds"},
      {"OMPDPU_TIMEOUT", &C.ResponseTimeout, 0, "seconds"},
      {"OMPDPU_HEARTBEAT", &C.HeartbeatInterval, 0.001, "seconds"},
      {"OMPDPU_KERNEL_TIMEOUT", &C.KernelTimeout, 0, "seconds"},
      {"OMPDPU_SPIN_US", &C.SpinMicros, 0, "microseconds"},
      {"OMPDPU_WAKE_SLICE_US", &C.WakeSliceMicros, 0, "microseconds"}};
  for (auto &N : Numbers)
    if (const char *V = Env(N.Name)) {
      auto D = parseSeconds(N.Name, V, N.Min, N.Unit);
      if (!D)
        return D.status();
      *N.Field = *D;
    }
  if (C.ResponseTimeout > 0 && C.HeartbeatInterval >= C.ResponseTimeout)
    C.HeartbeatInterval = C.ResponseTimeout / 4;
  C.Trace = traceSetting(Env);
  if (const char *V = Env("OMPDPU_YIELD")) {
    std::string Y = V;
    if (Y == "1" || Y == "yes")
      C.YieldWhenIdle = true;
    else if (!Y.empty() && Y != "0" && Y != "no")
      return Status::error("OMPDPU_YIELD must be 0 or 1, not '" + Y + "'");
  }

  if (const char *V = Env("OMPDPU_AUTH"); V && *V) {
    C.Auth = V;
    if (C.Auth != "auto" && C.Auth != "key" && C.Auth != "munge" &&
        C.Auth != "none")
      return Status::error("OMPDPU_AUTH must be auto, key, munge or none, "
                           "not '" +
                           C.Auth + "'");
  }
  if (const char *V = Env("OMPDPU_KEY"); V && *V) {
    C.KeyFile = V;
    C.KeyFileGiven = true;
  } else if (const char *X = Env("XDG_CONFIG_HOME"); X && *X)
    C.KeyFile = std::string(X) + "/ompdpu/key";
  else if (const char *H = Env("HOME"); H && *H)
    C.KeyFile = std::string(H) + "/.config/ompdpu/key";
  if (const char *V = Env("OMPDPU_MUNGE_SOCKET"); V && *V)
    C.MungeSocket = V;

  if (const char *V = Env("OMPDPU_DEVICES")) {
    C.DevicesFrom = "OMPDPU_DEVICES";
    if (!*V)
      return C; // explicitly empty: no devices
    auto L = parseDeviceList(V);
    if (!L)
      return L.status().withContext("OMPDPU_DEVICES");
    C.NodeDevices = *L;
    if (Status S = shareNodeDevices(Env, C, "all"))
      return S;
    return C;
  }
  return loadDevicesFile(Env, Hostname, C);
}

} // namespace ompdpu
