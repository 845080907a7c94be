//===- source_files.h - Which source file a symbol of an image came from --===//
//
// An image's .symtab lists each object's local symbols after an STT_FILE
// symbol naming its source file; clang 14 gives each offload entry's name
// string such a local symbol, so the entry's file is known without -g.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ompdpu {

/// For each address (the image's own virtual addresses), the source file (its
/// last path component) of
/// a local symbol defined there; "" where none says (a stripped image, an
/// LTO link's "ld-temp.o", no symbol there). Never fails: a name is a nicety.
std::vector<std::string> sourceFilesAt(const void *Image, size_t Size,
                                       const std::vector<uint64_t> &Addrs);

} // namespace ompdpu
