//===- omptarget_abi16.h - Types libomptarget 16 added ----------*- C++ -*-===//
//
// Declared here, like omptarget_abi.h, so that the plugin builds with no LLVM
// 16 install; the layout is that of LLVM 16's omptarget.h (struct version 2).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "omptarget_abi.h"

extern "C" {
/// A kernel launch as libomptarget 16 describes it to launch_kernel.
struct KernelArgsTy {
  uint32_t Version; ///< of this struct's layout
  uint32_t NumArgs; ///< after libomptarget's mapping: the kernel's arguments
  void **ArgBasePtrs;
  void **ArgPtrs;
  int64_t *ArgSizes;
  int64_t *ArgTypes;
  void **ArgNames;
  void **ArgMappers;
  uint64_t Tripcount; ///< of a teams/distribute loop, 0 otherwise
  struct {
    uint64_t NoWait : 1; ///< spawned with a nowait clause
    uint64_t Unused : 63;
  } Flags;
  uint32_t NumTeams[3];
  uint32_t ThreadLimit[3];
  uint32_t DynCGroupMem;
};
}

static_assert(sizeof(KernelArgsTy) == 104, "LLVM 16's KernelArgsTy (LP64)");
