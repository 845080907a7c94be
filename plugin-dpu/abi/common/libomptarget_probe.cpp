//===- libomptarget_probe.cpp - Which libomptarget loaded a plugin --------===//
#include "libomptarget_probe.h"

#include "common/log.h"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <link.h>
#include <string>
#include <strings.h>
#include <unistd.h>

namespace ompdpu::abi {

int libomptargetMajor() {
  int Major = 0;
  dl_iterate_phdr(
      [](dl_phdr_info *Info, size_t, void *Out) {
        const char *Base = std::strrchr(Info->dlpi_name, '/');
        Base = Base ? Base + 1 : Info->dlpi_name;
        const char Prefix[] = "libomptarget.so.";
        if (std::strncmp(Base, Prefix, sizeof(Prefix) - 1) != 0)
          return 0;
        *static_cast<int *>(Out) = std::atoi(Base + sizeof(Prefix) - 1);
        return 1;
      },
      &Major);
  return Major;
}

namespace {
/// This library's own file, for messages.
std::string ownFile() {
  Dl_info Info;
  if (dladdr(reinterpret_cast<void *>(&ownFile), &Info) && Info.dli_fname)
    return Info.dli_fname;
  return "the ompdpu plugin";
}

/// Where the plugin for libomptarget Major is, relative to lib/ompdpu.
const char *pluginDirFor(int Major) {
  if (Major >= 14 && Major <= 16)
    return "lib/ompdpu (the default of `ompdpu run`)";
  if (Major == 17)
    return "lib/ompdpu/llvm17 (`ompdpu run` picks it, unless "
           "OMPDPU_PLUGIN_DIR says otherwise)";
  if (Major == 18)
    return "lib/ompdpu/llvm18 (`ompdpu run` picks it, unless "
           "OMPDPU_PLUGIN_DIR says otherwise)";
  return nullptr;
}

/// Whether this is the 14/15 library that libomptarget 16 falls back to after
/// its `.nextgen.so` sibling (this directory's 16 plugin) declined: no devices
/// of its ISA.
bool isNextgenFallback(int Major) {
  if (Major != 16)
    return false;
  const char *Env = std::getenv("LIBOMPTARGET_NEXTGEN_PLUGINS");
  if (Env && (!std::strcmp(Env, "0") || !strcasecmp(Env, "false") ||
              !strcasecmp(Env, "off") || !strcasecmp(Env, "no")))
    return false;
  std::string Own = ownFile();
  if (Own.size() < 3 || Own.compare(Own.size() - 3, 3, ".so") != 0)
    return false;
  std::string Sibling = Own.substr(0, Own.size() - 3) + ".nextgen.so";
  return access(Sibling.c_str(), F_OK) == 0;
}
} // namespace

bool servesThisLibomptarget() {
  int Major = libomptargetMajor();
  if (Major == 0 || servesLibomptarget(Major))
    return true;
  if (isNextgenFallback(Major)) {
    OMPDPU_DEBUG_LOG("libomptarget 16 loaded %s after its .nextgen.so sibling "
                     "had no devices: declined",
                     ownFile().c_str());
    return false;
  }
  const char *Dir = pluginDirFor(Major);
  log(LogLevel::Error,
      "libomptarget %d loaded %s, which has the plugin ABI of libomptarget "
      "%s: %s%s",
      Major, ownFile().c_str(), kServedVersions,
      Dir ? "its plugin is in " : "no ompdpu plugin serves it yet",
      Dir ? Dir : "");
  return false;
}

} // namespace ompdpu::abi
