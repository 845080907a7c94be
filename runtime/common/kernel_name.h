//===- kernel_name.h - A kernel named as its user wrote it ------*- C++ -*-===//
//
// clang names a target region's kernel __omp_offloading_<dev>_<file id>_
// <function>_l<line>; people know it as the region at that line of that
// function (and file, where the image says which).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

namespace ompdpu {

/// The function and line an offload entry name carries; Line 0 if it is not
/// one of clang's region names.
struct RegionPlace {
  std::string Function; ///< demangled when it is a C++ name
  unsigned Line = 0;
};

/// Read "__omp_offloading_fe00_a7c251_main_l12" as main, line 12.
RegionPlace regionPlace(const std::string &EntryName);

/// "main (faults.c:12)", "main (line 12)" without a file; an entry name that
/// is not a region's comes back as it is.
std::string kernelDisplayName(const std::string &EntryName,
                              const std::string &File);

} // namespace ompdpu
