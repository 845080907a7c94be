//===- output_cursor.h - Each byte of a session's output once ---*- C++ -*-===//
#pragma once

#include "protocol/messages.h"

#include <cstddef>
#include <cstdint>

namespace ompdpu::client {

/// How far one of a session's streams has been written: a piece may come
/// twice, from the session and, once it died, from its supervisor (when the
/// session could not tell whether UCX had delivered it).
class OutputCursor {
public:
  /// How many bytes from the front of a piece of Len bytes at Offset were
  /// written already (Len: all of them); the rest counts as written now.
  size_t seen(uint64_t Offset, size_t Len) {
    if (Offset == protocol::Output::kNotInStream)
      return 0;
    uint64_t End = Offset + Len;
    if (End <= Done)
      return Len;
    size_t Seen = Done > Offset ? static_cast<size_t>(Done - Offset) : 0;
    Done = End;
    return Seen;
  }

private:
  uint64_t Done = 0;
};

} // namespace ompdpu::client
