//===- dpu_plugin.cpp - The set of DPUs this plugin drives ----------------===//
#include "dpu_plugin.h"

#include "common/elf_image.h"
#include "common/log.h"
#include "plugin_copies.h"
#include "transport/transport.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <strings.h>

namespace ompdpu::plugin {

namespace {
/// "libomptarget.rtl.aarch64.so" -> "aarch64"; other names -> "".
std::string isaFromOwnFileName() {
  Dl_info Info;
  if (!dladdr(reinterpret_cast<void *>(&isaFromOwnFileName), &Info) ||
      !Info.dli_fname)
    return "";
  std::string Name = Info.dli_fname;
  Name = Name.substr(Name.rfind('/') + 1);
  const std::string Prefix = "libomptarget.rtl.";
  if (Name.rfind(Prefix, 0) != 0)
    return "";
  std::string Rest = Name.substr(Prefix.size());
  return Rest.substr(0, Rest.find('.'));
}

/// The ISA a library was built for (setLibraryIsa); null: its file name's.
const char *LibraryIsa = nullptr;

bool offloadMandatory() {
  const char *V = std::getenv("OMP_TARGET_OFFLOAD");
  return V && strcasecmp(V, "mandatory") == 0;
}

} // namespace

DpuPlugin &DpuPlugin::get() {
  static DpuPlugin *P = new DpuPlugin();
  return *P;
}

DpuPlugin::DpuPlugin() : Isa(LibraryIsa ? LibraryIsa : isaFromOwnFileName()) {
  connectAll();
}

void DpuPlugin::setLibraryIsa(const char *I) { LibraryIsa = I; }

void DpuPlugin::connectAll() {
  auto Cfg = loadClientConfig([](const char *N) { return std::getenv(N); });
  if (!Cfg) {
    if (firstToReport("configuration"))
      log(LogLevel::Error, "configuration: %s", Cfg.status().message().c_str());
    return;
  }
  if (!Cfg->NoDevicesReason.empty() && firstToReport("no-device-for-node"))
    log(offloadMandatory() ? LogLevel::Error : LogLevel::Warning,
        "%s: target regions %s", Cfg->NoDevicesReason.c_str(),
        offloadMandatory() ? "cannot run" : "run on the host");
  if (!Cfg->Share.empty())
    OMPDPU_DEBUG_LOG("node '%s': %s", Cfg->Hostname.c_str(),
                     Cfg->Share.c_str());
  const auto &Addrs = Cfg->Devices;
  // Connect to all servers at once (start-up costs one connect timeout, not
  // one per unreachable server), from this thread alone: libomptarget may
  // call us from a library constructor under dlopen, holding the dynamic
  // loader's lock, which UCX's initialisation in any other thread would
  // wait for (it loads its transports with dlopen).
  std::vector<Expected<std::unique_ptr<client::Connection>>> Results;
  auto Deadline = client::Connection::connectDeadline(*Cfg);
  for (const DeviceAddress &A : Addrs) {
    // The other copy of the plugin waited for it already.
    if (auto Why = knownUnreachable(A.text()))
      Results.push_back(Status::error(ErrorCode::Unreachable, *Why));
    else
      Results.push_back(client::Connection::start(A, *Cfg, Isa));
  }
  client::Connection::finishAll(Results, Deadline);

  bool Mandatory = offloadMandatory();
  std::vector<bool> Unreachable(Addrs.size());
  for (size_t K = 0; K < Addrs.size(); ++K) {
    if (Results[K])
      continue;
    const std::string &Why = Results[K].status().message();
    if (Results[K].status().code() == ErrorCode::OtherIsa) {
      OMPDPU_DEBUG_LOG("%s: serves another ISA (%s)", Addrs[K].text().c_str(),
                       Why.c_str());
      continue; // the plugin copy for that ISA takes it
    }
    Unreachable[K] = true;
    if (!knownUnreachable(Addrs[K].text()))
      noteUnreachable(Addrs[K].text(), Why);
    if (firstToReport(Addrs[K].text()))
      log(Mandatory ? LogLevel::Error : LogLevel::Note, "device %zu (%s): %s",
          K, Addrs[K].text().c_str(), Why.c_str());
  }
  auto Live = std::count_if(Results.begin(), Results.end(),
                            [](const auto &R) { return bool(R); });
  auto Silent = std::count(Unreachable.begin(), Unreachable.end(), true);
  // Unreachable servers keep their device numbers (device(k) still means
  // the k-th DPU; using one fails, naming it), in one plugin copy: the
  // first with a server that answered.
  bool Placeholders =
      Live && Silent && firstToReport("placeholders-for-unreachable");
  std::vector<std::unique_ptr<client::Connection>> Served;
  for (size_t K = 0; K < Addrs.size(); ++K) {
    if (Results[K])
      Served.push_back(std::move(*Results[K]));
    else if (Placeholders && Unreachable[K])
      Served.push_back(
          client::Connection::unreachable(Addrs[K], *Cfg, Results[K].status()));
  }
  for (auto &C : Served)
    Devices.push_back(std::make_unique<DpuDevice>(
        static_cast<int32_t>(Devices.size()),
        static_cast<int32_t>(Served.size()), std::move(C)));
  if (Silent && static_cast<size_t>(Silent) == Addrs.size() && !Mandatory &&
      firstToReport("no-device-note"))
    log(LogLevel::Note, "no DPU reachable: target regions run on the host");
  OMPDPU_DEBUG_LOG("plugin for ISA '%s': %zu of %zu devices connected",
                   Isa.c_str(), static_cast<size_t>(Live), Addrs.size());
}

bool DpuPlugin::acceptsMachine(uint16_t Machine) const {
  for (const auto &D : Devices)
    if (D->machine() == Machine)
      return true;
  return false;
}

void DpuPlugin::explainRefusedImage(uint16_t Machine) const {
  if (Devices.empty() || !std::strcmp(isaName(Machine), "unknown") ||
      !firstToReport(std::string("image-isa-") + isaName(Machine)))
    return;
  std::string Servers;
  for (const auto &D : Devices)
    Servers += format("%s%s runs %s", Servers.empty() ? "" : ", ",
                      D->name().c_str(), isaName(D->machine()));
  bool Mandatory = offloadMandatory();
  log(Mandatory ? LogLevel::Error : LogLevel::Note,
      "this program's device images are for %s, which no DPU runs (%s): "
      "target regions %s; compile for the DPUs' ISA (emulated DPUs: x86_64, "
      "ompdpu-cc --emulate; a BlueField: aarch64, ompdpu-cc)",
      isaName(Machine), Servers.c_str(),
      Mandatory ? "cannot run" : "run on the host");
}

} // namespace ompdpu::plugin
