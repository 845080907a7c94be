//===- fuzz_frames.cpp - Every frame a peer can send, decoded -------------===//
//
// Whatever the bytes, parseFrame and every body's decoder must reject them
// or read them within bounds; what decodes must encode back to a frame that
// decodes again.
//
//===----------------------------------------------------------------------===//
#include "protocol/messages.h"
#include "protocol/session_channel.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>

using namespace ompdpu::protocol;

namespace {
template <typename T> void roundTrip(const Header &H, Reader &Body) {
  T Msg;
  if (!decodeBody(Body, Msg).ok())
    return;
  std::vector<uint8_t> Again = frame(H, Msg);
  Header H2;
  Reader B2;
  T Msg2;
  if (!parseFrame(Again.data(), Again.size(), H2, B2).ok() ||
      !decodeBody(B2, Msg2).ok())
    std::abort(); // what was accepted once must be accepted again
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  Header H;
  Reader Body;
  if (!parseFrame(Data, Size, H, Body).ok())
    return 0;
  switch (H.Type) {
  case MsgType::Hello:
    roundTrip<Hello>(H, Body);
    break;
  case MsgType::HelloReply:
    roundTrip<HelloReply>(H, Body);
    break;
  case MsgType::AuthChallenge:
    roundTrip<AuthChallenge>(H, Body);
    break;
  case MsgType::AuthProof:
    roundTrip<AuthProof>(H, Body);
    break;
  case MsgType::Attach:
    roundTrip<Attach>(H, Body);
    break;
  case MsgType::Reply:
    roundTrip<Reply>(H, Body);
    break;
  case MsgType::Alloc:
    roundTrip<Alloc>(H, Body);
    break;
  case MsgType::Free:
    roundTrip<Free>(H, Body);
    break;
  case MsgType::Submit:
  case MsgType::Retrieve:
    roundTrip<Transfer>(H, Body);
    break;
  case MsgType::LoadImage:
    roundTrip<LoadImage>(H, Body);
    break;
  case MsgType::Run:
    roundTrip<Run>(H, Body);
    break;
  case MsgType::ExchangeOut:
    roundTrip<ExchangeOut>(H, Body);
    break;
  case MsgType::PeerSubmit:
    roundTrip<PeerSubmit>(H, Body);
    break;
  case MsgType::Ping:
  case MsgType::Bye:
    roundTrip<Empty>(H, Body);
    break;
  case MsgType::SessionExit:
    roundTrip<SessionExit>(H, Body);
    break;
  case MsgType::Batch: {
    BatchView B;
    if (decodeBody(Body, B).ok()) {
      // Every piece the view reports lies inside the frame.
      volatile uint64_t Sum = B.inBytes() + B.outBytes();
      for (size_t K = 0; K < B.numArgs(); ++K)
        Sum = Sum + B.arg(K);
      for (size_t K = 0; K < B.numIn(); ++K)
        Sum = Sum + B.in(K).Size;
      for (size_t K = 0; K < B.numOut(); ++K)
        Sum = Sum + B.out(K).DevicePtr;
    }
    break;
  }
  case MsgType::Landed:
    roundTrip<Landed>(H, Body);
    break;
  case MsgType::Output:
    roundTrip<Output>(H, Body);
    break;
  case MsgType::SessionSetup:
    roundTrip<SessionSetup>(H, Body);
    break;
  case MsgType::SessionReady:
    roundTrip<SessionReady>(H, Body);
    break;
  case MsgType::SessionCrash:
    roundTrip<SessionCrash>(H, Body);
    break;
  case MsgType::SessionRawOutput:
    roundTrip<SessionRawOutput>(H, Body);
    break;
  case MsgType::Trace:
    roundTrip<TraceControl>(H, Body);
    break;
  }
  // The entry table of a LoadImage reply arrives as bulk data.
  std::vector<EntryInfo> Entries;
  (void)decodeEntries(Data, Size, Entries);
  // So does a session's trace record, answering Trace Collect.
  TraceRecord Rec, Again;
  if (decodeTraceRecord(Data, Size, Rec).ok()) {
    std::vector<uint8_t> Bytes = encodeTraceRecord(Rec);
    if (!decodeTraceRecord(Bytes.data(), Bytes.size(), Again).ok())
      std::abort();
  }
  return 0;
}
