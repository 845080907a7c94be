//===- reply_sender.h - How a session answers its client --------*- C++ -*-===//
//
// Replies leave through the client's endpoint, preceded by what kernels
// printed meanwhile (it must arrive first: one endpoint's messages arrive
// in order). Small replies leave at once; others finish later, and the
// caller learns when.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "protocol/messages.h"
#include "server/output_capture.h"
#include "transport/transport.h"

#include <functional>
#include <memory>
#include <vector>

namespace ompdpu::server {

class ReplySender {
public:
  ReplySender(transport::Worker &W, OutputCapture *Capture)
      : W(W), Capture(Capture) {}

  /// Answer Request (to To; null: nobody to answer) with Rep and Len bytes
  /// of Data (kept valid by KeepAlive until sent). True when it is done
  /// with Data at once; otherwise AfterSent runs once it is.
  bool reply(const protocol::Header &Request, transport::Peer To,
             const protocol::Reply &Rep, const void *Data, size_t Len,
             std::shared_ptr<void> KeepAlive,
             const std::function<void()> &AfterSent);
  /// Send what kernels printed to To.
  void sendOutput(transport::Peer To);
  /// Kernels printed something not yet sent.
  bool outputPending() const { return Capture && Capture->pending(); }
  /// Progress the worker; output sends may complete in it (see HandOver).
  unsigned progress();

private:
  transport::Worker &W;
  OutputCapture *Capture;
  std::vector<uint8_t> SendBuf; ///< replies are encoded here (loop only)
};

} // namespace ompdpu::server
