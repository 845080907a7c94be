//===- reply_landing.h - Where a reply's bytes go ----------------*- C++
//-*-===//
//
// A reply's bulk data lands in the host ranges its request named (a
// Retrieve's one, a Batch's out pieces back to back) or in the request's
// payload (a LoadImage's entry table). Decided before any byte moves, from
// the request and the data's length alone, so that a reply of the wrong
// size or kind is an error and never a stray write.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "client/pending.h"
#include "common/status.h"

#include <cstddef>

namespace ompdpu::client {

struct Landing {
  Status Error;        ///< the reply does not fit its request
  bool Done = false;   ///< nothing to land: the request is complete
  void *Dst = nullptr; ///< where the bytes go whole
  /// The bytes are scattered over several ranges: from the data itself
  /// (eager) or from the payload they land in first (Dst).
  bool Scatter = false;
};

/// How to land Length bytes (Rendezvous: still on the sender) of T's reply.
/// May size T's payload.
Landing planLanding(PendingOp &T, size_t Length, bool Rendezvous);
/// Copy the bytes at Src, back to back, into T's ranges.
void scatterInto(const PendingOp &T, const uint8_t *Src);

} // namespace ompdpu::client
