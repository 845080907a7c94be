//===- reply_landing.cpp - Where a reply's bytes go -----------------------===//
#include "client/reply_landing.h"

#include "common/log.h"

#include <cstring>

namespace ompdpu::client {

using protocol::MsgType;

Landing planLanding(PendingOp &T, size_t Length, bool Rendezvous) {
  Landing L;
  uint64_t Expected = 0;
  for (const HostRange &H : T.Into)
    Expected += H.Size;
  if (!Length) {
    if (Expected)
      L.Error = Status::error(
          format("%s reply carries no data", protocol::typeName(T.Type)));
    L.Done = true;
    return L;
  }
  if (T.Type == MsgType::Retrieve || T.Type == MsgType::Batch) {
    if (Length != Expected) {
      L.Error = Status::error(
          format("%s of %lu bytes answered with %zu",
                 T.Type == MsgType::Batch ? "batch retrieve" : "retrieve",
                 (unsigned long)Expected, Length));
      return L;
    }
    // One destination takes the bytes whole (rendezvous data: zero copy).
    L.Scatter = T.Into.size() > 1;
    if (!L.Scatter) {
      L.Dst = T.Into[0].Dst;
    } else if (Rendezvous) {
      T.Payload.resize(Length);
      L.Dst = T.Payload.data();
    }
    return L;
  }
  if (T.Type == MsgType::LoadImage || T.Type == MsgType::Trace) {
    T.Payload.resize(Length);
    L.Dst = T.Payload.data();
    return L;
  }
  L.Error = Status::error("unexpected data in reply");
  return L;
}

void scatterInto(const PendingOp &T, const uint8_t *Src) {
  for (const HostRange &H : T.Into) {
    std::memcpy(H.Dst, Src, H.Size);
    Src += H.Size;
  }
}

} // namespace ompdpu::client
