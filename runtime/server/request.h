//===- request.h - A request in a session, and how it is answered -*- C++ -*-=//
#pragma once

#include "protocol/messages.h"
#include "transport/transport.h"

#include <cstring>
#include <memory>
#include <vector>

namespace ompdpu::server {

/// A request's body, copied out of the transport's buffer. Most bodies are
/// small: they live inline, without an allocation per request.
class FrameBody {
public:
  void assign(const uint8_t *Begin, const uint8_t *End) {
    Len = static_cast<size_t>(End - Begin);
    if (Len <= sizeof(Inline))
      std::memcpy(Inline, Begin, Len);
    else
      Heap.assign(Begin, End);
  }
  const uint8_t *data() const {
    return Len <= sizeof(Inline) ? Inline : Heap.data();
  }
  size_t size() const { return Len; }

private:
  uint8_t Inline[128]; // a Run with 16 arguments fits
  std::vector<uint8_t> Heap;
  size_t Len = 0;
};

/// A request taken off the wire, waiting for its turn.
struct Request {
  protocol::Header H;
  transport::Peer From = nullptr;
  FrameBody Body;
  transport::BulkData Data;
};

/// What finishes a request: its reply is sent, then its queue moves on.
class RequestFinisher {
public:
  virtual ~RequestFinisher() = default;
  /// Answer the request known by its header and sender with Rep and Len
  /// bytes of Data (kept valid by KeepAlive until sent).
  virtual void complete(const protocol::Header &Request, transport::Peer From,
                        const protocol::Reply &Rep, const void *Data,
                        size_t Len, std::shared_ptr<void> KeepAlive) = 0;
  /// Operations of Queue numbered below Through have their bytes in place.
  virtual void markLanded(uint32_t Queue, uint32_t Through) = 0;

  void complete(const protocol::Header &Request, transport::Peer From,
                const protocol::Reply &Rep) {
    complete(Request, From, Rep, nullptr, 0, nullptr);
  }
  void complete(const Request &R, const protocol::Reply &Rep,
                const void *Data = nullptr, size_t Len = 0,
                std::shared_ptr<void> KeepAlive = nullptr) {
    complete(R.H, R.From, Rep, Data, Len, std::move(KeepAlive));
  }
};

} // namespace ompdpu::server
