//===- libomptarget_probe.h - Which libomptarget a program loads *- C++ -*-===//
//
// Reads a program's dynamic section (libelf) and resolves its libomptarget
// as the dynamic loader would, without running it, so that `ompdpu run` can
// put the plugin directory of that LLVM version on the library path.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/status.h"

#include <string>
#include <vector>

namespace ompdpu::tools {

/// The dynamic section entries the loader resolves libraries with.
struct DynamicInfo {
  std::vector<std::string> Needed; ///< DT_NEEDED, in order
  std::string RPath, RunPath;      ///< DT_RPATH, DT_RUNPATH (':'-separated)
  std::string SoName;              ///< DT_SONAME
};

/// The dynamic section of an ELF file; an error for a file that has none
/// (a script, a static program).
Expected<DynamicInfo> readDynamic(const std::string &File);

/// The directories the loader searches for the program's libraries, in its
/// order: DT_RPATH (only without DT_RUNPATH), LD_LIBRARY_PATH, DT_RUNPATH,
/// the system's; $ORIGIN is the program's directory.
std::vector<std::string> searchDirs(const DynamicInfo &D,
                                    const std::string &Origin,
                                    const char *LdLibraryPath);

/// The LLVM major version of a libomptarget from its soname
/// ("libomptarget.so.18.1": 18); an unversioned one ("libomptarget.so")
/// from an llvm-<N> directory in Path, otherwise 14 (the only release
/// without a versioned soname). 0: not a libomptarget name.
int libomptargetMajor(const std::string &SoName, const std::string &Path);

/// What a program will load as its libomptarget.
struct LibomptargetProbe {
  std::string Needed; ///< its DT_NEEDED name; empty: the program needs none
  std::string Path;   ///< the file the loader would take; empty: not found
  int Major = 0;      ///< its LLVM major version; 0: unknown
};

/// Probe Program (a path, or a name looked up in PATH) as it would run with
/// this LD_LIBRARY_PATH (may be null).
LibomptargetProbe probeLibomptarget(const std::string &Program,
                                    const char *LdLibraryPath);

/// Probe a command line (null-terminated): its program or, when that needs
/// no libomptarget, the first argument that is an ELF file needing one (a
/// program that dlopens the offload library it is given).
LibomptargetProbe probeCommand(char *const *Argv, const char *LdLibraryPath);

} // namespace ompdpu::tools
