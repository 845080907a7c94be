//===- plugin_dirs.h - The plugin directory of each LLVM version *- C++ -*-===//
#pragma once

#include <string>
#include <vector>

namespace ompdpu::tools {

/// Where ompdpu's plugin for a range of libomptarget versions lives.
struct PluginLayout {
  int First, Last;   ///< the LLVM major versions it serves
  const char *Sub;   ///< below lib/ompdpu ("" or "llvm17")
  const char *Files; ///< what libomptarget loads from there
  const char *Note;  ///< its limits; empty: none
};

/// Every supported range, oldest first.
const std::vector<PluginLayout> &pluginLayouts();

/// The layout for a libomptarget major version; null when none serves it.
const PluginLayout *layoutFor(int Major);

/// The LD_LIBRARY_PATH entries `ompdpu run` adds for a program whose
/// libomptarget has this major version (0: unknown, taken as 14-16), given
/// the install's lib/ompdpu directory; lib/ompdpu/llvm19 comes last for the
/// other versions (libraries a program dlopens may need libomptarget 19).
std::string pluginPathFor(const std::string &LibOmpdpu, int Major);

/// Dir (an OMPDPU_PLUGIN_DIR) or its emulated/ directory holds a file that
/// libomptarget loads (libomptarget.rtl.*.so, libomptarget.so.19.1).
bool holdsPlugin(const std::string &Dir);

} // namespace ompdpu::tools
