//===- reply_sender.cpp - How a session answers its client ----------------===//
#include "server/reply_sender.h"

#include "common/log.h"

namespace ompdpu::server {

using namespace protocol;

bool ReplySender::reply(const Header &Request, transport::Peer To,
                        const Reply &Rep, const void *Data, size_t Len,
                        std::shared_ptr<void> KeepAlive,
                        const std::function<void()> &AfterSent) {
  if (!To)
    return true;
  if (outputPending())
    sendOutput(To);
  Header H;
  H.Type = MsgType::Reply;
  H.RequestId = Request.RequestId;
  H.Queue = Request.Queue;
  H.Seq = Request.Seq;
  frameInto(SendBuf, H, Rep);
  if (W.trySend(To, SendBuf.data(), SendBuf.size(), Data, Len,
                /*NeedsAnswer=*/false))
    return true;
  W.send(
      To, SendBuf, Data, Len,
      [AfterSent, KeepAlive = std::move(KeepAlive)](const Status &S) {
        if (!S.ok())
          OMPDPU_DEBUG_LOG("reply not delivered: %s", S.message().c_str());
        AfterSent();
      },
      /*NeedsAnswer=*/false);
  return false;
}

void ReplySender::sendOutput(transport::Peer To) {
  if (!To || !Capture)
    return;
  OutputCapture::HandOver H;
  auto Send = [&](int Stream, uint64_t Offset, const char *Data, size_t Len) {
    // A piece's bytes leave the ring once UCX has them (sends on one
    // endpoint complete in order).
    W.send(
        To, outputFrame(static_cast<uint8_t>(Stream), Offset, Data, Len),
        nullptr, 0,
        [this, Stream, Len](const Status &) { Capture->sent(Stream, Len); },
        /*NeedsAnswer=*/false);
  };
  for (int S = 1; S <= 2; ++S)
    if (uint64_t N = Capture->takeDropped(S)) {
      std::string Note = format("[ompdpu: %lu bytes of device output lost: "
                                "the output buffer was full]\n",
                                (unsigned long)N);
      W.send(To,
             outputFrame(static_cast<uint8_t>(S), Output::kNotInStream,
                         Note.data(), Note.size()),
             nullptr, 0, nullptr, /*NeedsAnswer=*/false);
    }
  Capture->drain(Output::kMaxBytes, Send);
}

unsigned ReplySender::progress() {
  if (!Capture || !Capture->inFlight())
    return W.progress();
  OutputCapture::HandOver H;
  return W.progress();
}

} // namespace ompdpu::server
