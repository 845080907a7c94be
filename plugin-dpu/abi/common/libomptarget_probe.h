//===- libomptarget_probe.h - Which libomptarget loaded a plugin -*- C++
//-*-===//
//
// A drop-in plugin library (14-18) serves the plugin ABI of some libomptarget
// versions only; another version would misread it or drop it without a
// word. These find the libomptarget in the process and say which plugin
// directory serves it. A plugin linked into libomptarget (19+) needs none.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace ompdpu::abi {

/// The major version of the libomptarget in this process, from its file name
/// (libomptarget.so.<N>); 0 when the name carries none (Debian's 14).
int libomptargetMajor();

/// Whether this library has the plugin ABI of libomptarget `Major`, and the
/// versions it serves ("14 and 15"); defined per library (tgt_rtl/served.cpp).
bool servesLibomptarget(int Major);
extern const char *const kServedVersions;

/// True when this library serves the libomptarget in this process;
/// otherwise false, after saying which plugin directory does (or, for the
/// 14/15 library libomptarget 16 tries after its .nextgen.so sibling
/// declined, quietly).
bool servesThisLibomptarget();

} // namespace ompdpu::abi
