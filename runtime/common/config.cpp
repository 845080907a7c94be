//===- config.cpp - Client configuration from the environment -------------===//
#include "common/config.h"

#include "common/host_port.h"
#include "common/log.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace ompdpu {

std::string DeviceAddress::text() const { return hostPortText(Host, Port); }

static std::string trim(const std::string &S) {
  size_t B = S.find_first_not_of(" \t\r\n");
  if (B == std::string::npos)
    return "";
  size_t E = S.find_last_not_of(" \t\r\n");
  return S.substr(B, E - B + 1);
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
    Item = trim(Item);
    if (Item.empty())
      return Status::error("empty item in device list '" + S + "'");
    auto A = parseHostPort(Item);
    if (!A)
      return A.status();
    Out.push_back(*A);
  }
  return Out;
}

Expected<std::vector<DeviceAddress>> parseDeviceFile(const std::string &Text) {
  std::vector<DeviceAddress> Out;
  std::stringstream SS(Text);
  std::string Line;
  int LineNo = 0;
  while (std::getline(SS, Line)) {
    ++LineNo;
    size_t Hash = Line.find('#');
    if (Hash != std::string::npos)
      Line.resize(Hash);
    Line = trim(Line);
    if (Line.empty())
      continue;
    auto A = parseHostPort(Line);
    if (!A)
      return A.status().withContext("line " + std::to_string(LineNo));
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

Expected<ClientConfig> loadClientConfig(const EnvLookup &Env) {
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
    C.Devices = *L;
    return C;
  }
  std::vector<std::string> Files;
  if (const char *V = Env("OMPDPU_CONFIG"))
    Files.push_back(V);
  else {
    if (const char *X = Env("XDG_CONFIG_HOME"))
      Files.push_back(std::string(X) + "/ompdpu/devices");
    else if (const char *H = Env("HOME"))
      Files.push_back(std::string(H) + "/.config/ompdpu/devices");
    Files.push_back("/etc/ompdpu/devices");
  }
  for (size_t K = 0; K < Files.size(); ++K) {
    std::string Text;
    if (!readFile(Files[K], Text)) {
      if (K == 0 && Env("OMPDPU_CONFIG"))
        return Status::error("cannot read OMPDPU_CONFIG file '" + Files[K] +
                             "'");
      continue;
    }
    auto L = parseDeviceFile(Text);
    if (!L)
      return L.status().withContext(Files[K]);
    C.Devices = *L;
    C.DevicesFrom = Files[K];
    return C;
  }
  return C;
}

} // namespace ompdpu
