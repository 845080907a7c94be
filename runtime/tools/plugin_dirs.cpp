//===- plugin_dirs.cpp - The plugin directory of each LLVM version --------===//
#include "tools/plugin_dirs.h"

#include <dirent.h>
#include <memory>

namespace ompdpu::tools {

const std::vector<PluginLayout> &pluginLayouts() {
  static const std::vector<PluginLayout> Layouts = {
      {14, 16, "",
       "libomptarget.rtl.aarch64.so (real DPUs), emulated/"
       "libomptarget.rtl.x86_64.so (14, 15) and .x86_64.nextgen.so (16)",
       ""},
      {17, 17, "llvm17",
       "libomptarget.rtl.aarch64.so, emulated/libomptarget.rtl.x86_64.so", ""},
      // 18 tries only the names of its own build's plugins.
      {18, 18, "llvm18",
       "libomptarget.rtl.cuda.so (real DPUs), "
       "emulated/libomptarget.rtl.x86_64.so",
       "18 loads only its build's plugin names: ompdpu takes CUDA's "
       "(aarch64 DPUs) and the host plugin's (x86_64, emulated DPUs), so a "
       "program run this way has neither LLVM's CUDA nor its host devices"},
      // 19 links its plugins in: the directory holds a rebuilt libomptarget.
      {19, 19, "llvm19",
       "libomptarget.so.19.1, rebuilt with the dpu plugin inside "
       "(llvm-patches/build-libomptarget-19.sh)",
       "DPU devices come first, LLVM's host plugin's after them"},
  };
  return Layouts;
}

const PluginLayout *layoutFor(int Major) {
  for (const PluginLayout &L : pluginLayouts())
    if (Major >= L.First && Major <= L.Last)
      return &L;
  return nullptr;
}

std::string pluginPathFor(const std::string &LibOmpdpu, int Major) {
  const PluginLayout *L = layoutFor(Major ? Major : 14);
  std::string Dir = LibOmpdpu;
  if (L && *L->Sub)
    Dir += std::string("/") + L->Sub;
  std::string Path = Dir + "/emulated:" + Dir;
  // llvm19 holds only libomptarget.so.19.1, which no other version loads:
  // always on the path, for libraries dlopened by a program that has none.
  if (Major != 19)
    Path += ":" + LibOmpdpu + "/llvm19";
  return Path;
}

namespace {
bool holdsLibomptargetFile(const std::string &Dir) {
  std::unique_ptr<DIR, int (*)(DIR *)> D(opendir(Dir.c_str()), closedir);
  if (!D)
    return false;
  while (dirent *E = readdir(D.get())) {
    std::string Name = E->d_name;
    if (!Name.rfind("libomptarget.rtl.", 0) ||
        !Name.rfind("libomptarget.so", 0))
      return true;
  }
  return false;
}
} // namespace

bool holdsPlugin(const std::string &Dir) {
  return holdsLibomptargetFile(Dir) || holdsLibomptargetFile(Dir + "/emulated");
}

} // namespace ompdpu::tools
