//===- omptarget_abi18.h - Types libomptarget 18 added ----------*- C++ -*-===//
//
// Declared here, like omptarget_abi.h, so that the plugin builds with no LLVM
// 18 install; the layout is that of LLVM 18.1's Shared/APITypes.h.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "omptarget_abi.h"

extern "C" {
/// The plugin's name for a loaded image, passed back to get_global and
/// get_function.
struct __tgt_device_binary {
  uintptr_t handle;
};
}
