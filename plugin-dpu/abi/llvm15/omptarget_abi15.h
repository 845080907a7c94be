//===- omptarget_abi15.h - Types libomptarget 15 added ----------*- C++ -*-===//
//
// Declared here, like omptarget_abi.h, so that the plugin builds with no LLVM
// 15 install; the layout is that of LLVM 15's and 16's omptarget.h.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "omptarget_abi.h"

extern "C" {
/// What libomptarget read from an image's offload-binary wrapper.
struct __tgt_image_info {
  const char *Arch; ///< the offload architecture ("" for CPU targets)
};
}
