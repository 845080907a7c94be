//===- library_isa.cpp - The ISA of a library whose name names none -------===//
//
// libomptarget 18 loads only the plugin names of its own build (Debian's:
// x86_64, cuda, amdgpu), so ompdpu's library for real DPUs there is
// libomptarget.rtl.cuda.so. Compiled into such a library only, with the
// ISA it serves in OMPDPU_LIBRARY_ISA (plugin-dpu/CMakeLists.txt).
//
//===----------------------------------------------------------------------===//
#include "dpu_plugin.h"

namespace {
/// Runs when the library is loaded, before libomptarget calls it.
__attribute__((constructor)) void setLibraryIsa() {
  ompdpu::plugin::DpuPlugin::setLibraryIsa(OMPDPU_LIBRARY_ISA);
}
} // namespace
