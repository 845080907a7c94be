//===- connection.cpp - Protocol client for one DPU server ----------------===//
#include "client/connection.h"

#include "common/log.h"

namespace ompdpu::client {

using namespace protocol;

using transport::kBulkThreshold;
using Clock = std::chrono::steady_clock;

Expected<std::unique_ptr<Connection>>
Connection::open(const DeviceAddress &A, const ClientConfig &Cfg,
                 const std::string &WantIsa, WorkerFactory Make) {
  auto C = start(A, Cfg, WantIsa, std::move(Make));
  if (!C)
    return C.status();
  Status S = (*C)->finish(connectDeadline(Cfg));
  if (!S.ok())
    return S;
  return std::move(*C);
}

void Connection::finishAll(
    std::vector<Expected<std::unique_ptr<Connection>>> &Started,
    Clock::time_point Deadline) {
  for (auto &C : Started)
    if (C)
      if (Status S = (*C)->finish(Deadline); !S.ok())
        C = S;
}

Clock::time_point Connection::connectDeadline(const ClientConfig &Cfg) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(Cfg.ConnectTimeout));
}

Expected<std::unique_ptr<Connection>>
Connection::start(const DeviceAddress &A, const ClientConfig &Cfg,
                  const std::string &WantIsa, WorkerFactory Make) {
  std::unique_ptr<Connection> C(new Connection(A, Cfg, std::move(Make)));
  Status S = C->sendHello(WantIsa);
  if (!S.ok())
    return S;
  return C;
}

std::unique_ptr<Connection> Connection::unreachable(const DeviceAddress &A,
                                                    const ClientConfig &Cfg,
                                                    const Status &Why) {
  std::unique_ptr<Connection> C(new Connection(A, Cfg, {}));
  C->Placeholder = true;
  C->failConnection(Why.withContext("not connected: unreachable when the "
                                    "program started"));
  return C;
}

Status Connection::finish(Clock::time_point Deadline) {
  Status S = explainConnectFailure(completeHandshake(Deadline));
  if (!S.ok())
    closeQuietly(); // no goodbye to a server that never answered
  return S;
}

Status Connection::sendHello(const std::string &WantIsa) {
  auto C = loadCredentials(Cfg);
  if (!C)
    return C.status().withContext("cannot connect");
  Creds = std::move(*C);
  Hi = helloFor(WantIsa);
  introduce(Creds, Hi);
  if (Status S = Ends.connectSupervisor(Addr); !S.ok())
    return S;
  HelloTicket = issue(MsgType::Hello, Hi, 0, 0, nullptr, 0, Lane::Supervisor);
  return Status();
}

Status Connection::awaitHandshake(const Ticket &T, Clock::time_point Deadline) {
  // The handshake has its own (connect) timeout.
  if (!waitUntil(T, Deadline)) {
    std::lock_guard<std::mutex> L(M);
    completeOp(T, Status::error(format("no answer within %.1f s "
                                       "(OMPDPU_CONNECT_TIMEOUT)",
                                       Cfg.ConnectTimeout)));
  }
  return T->Result.ok() ? Status() : T->Result.withContext("cannot connect");
}

Expected<Ticket> Connection::prove(const Ticket &Challenge) {
  AuthChallenge Ch;
  Reader Body(Challenge->Payload.data(), Challenge->Payload.size());
  if (!decodeBody(Body, Ch).ok())
    return Status::error(ErrorCode::Auth,
                         "cannot connect: malformed authentication challenge");
  auto Proof = answerChallenge(Creds, Hi, Ch);
  if (!Proof) {
    // An empty proof, so that the server logs the failed attempt too.
    Ticket Refused = issue(MsgType::AuthProof, AuthProof(), 0, 0, nullptr, 0,
                           Lane::Supervisor);
    waitUntil(Refused, Clock::now() + std::chrono::milliseconds(500));
    return Proof.status().withContext("cannot connect");
  }
  return issue(MsgType::AuthProof, *Proof, 0, 0, nullptr, 0, Lane::Supervisor);
}

Status Connection::completeHandshake(Clock::time_point Deadline) {
  Ticket T = std::move(HelloTicket);
  if (!T)
    return Status::error("cannot connect: no handshake under way");
  if (Status S = awaitHandshake(T, Deadline); !S.ok())
    return S;
  if (T->ReplyType == MsgType::AuthChallenge) {
    auto Sent = prove(T);
    if (!Sent)
      return Sent.status();
    T = std::move(*Sent);
    if (Status S = awaitHandshake(T, Deadline); !S.ok())
      return S;
  }
  if (T->ReplyType != MsgType::HelloReply)
    return Status::error("cannot connect: unexpected handshake answer");
  Reader Body(T->Payload.data(), T->Payload.size());
  auto Got = acceptHelloReply(Body);
  if (!Got)
    return Got.status();
  // A server that skipped the challenge has proved nothing about itself.
  if (Creds.Method != AuthMethod::None && T->Type == MsgType::Hello)
    return Status::error(ErrorCode::Auth,
                         "cannot connect: the server did not authenticate "
                         "itself (it runs --insecure?); set OMPDPU_AUTH=none "
                         "to use it anyway");
  Info = std::move(*Got);
  // The session's transports match the ones chosen here (see the
  // supervisor).
  {
    std::lock_guard<std::mutex> L(M);
    if (Status S = Ends.connectSession(
            Info.SessionAddress,
            transport::sessionTransports(Info.SameHost, Info.OtherAccount));
        !S.ok())
      return S;
  }
  Attach At;
  At.Token = Info.Token;
  Ticket A = issue(MsgType::Attach, At, 0, 0, nullptr, 0, Lane::Session);
  Status S = wait(A);
  if (!S.ok())
    return S.withContext("cannot attach to session");
  // The bulk endpoint attaches with the same token.
  S = wait(issue(MsgType::Attach, At, 0, 0, nullptr, 0, Lane::Bulk));
  if (!S.ok())
    return S.withContext("cannot attach bulk endpoint to session");
  if (Trace)
    log(LogLevel::Trace, "%s: bulk endpoint:\n%s", Addr.text().c_str(),
        Ends.describeBulk().c_str());
  if (Line)
    startSessionTrace();
  return Status();
}

Connection::~Connection() {
  if (Fork.inherited())
    return; // the parent's session: no trace, no goodbye (~RequestLink)
  if (Line)
    collectSessionTrace();
  if (Ends.peer(Lane::Supervisor) && alive()) {
    // Orderly goodbye, bounded in time; failures here change nothing.
    // (A failed connection completes both tickets at once.)
    auto Deadline = Clock::now() + std::chrono::seconds(1);
    waitUntil(issue(MsgType::Bye, Empty(), 0, 0, nullptr, 0, Lane::Session),
              Deadline);
    waitUntil(issue(MsgType::Bye, Empty(), 0, 0, nullptr, 0, Lane::Supervisor),
              Deadline);
  }
  closeQuietly();
}

Ticket Connection::alloc(uint64_t Size, int32_t Kind) {
  Alloc A;
  A.Size = Size;
  A.Kind = Kind;
  return issue(MsgType::Alloc, A, 0, 0, nullptr, 0, Lane::Session);
}

Ticket Connection::free(uint64_t Ptr) {
  Free F;
  F.Ptr = Ptr;
  return issue(MsgType::Free, F, 0, 0, nullptr, 0, Lane::Session);
}

Ticket Connection::submit(uint64_t Dst, const void *Src, uint64_t Size,
                          uint32_t Queue, uint32_t Seq) {
  Transfer X;
  X.DevicePtr = Dst;
  X.Size = Size;
  return issue(MsgType::Submit, X, Queue, Seq, Src, Size,
               Size >= kBulkThreshold ? Lane::Bulk : Lane::Session);
}

Ticket Connection::batch(const std::vector<Piece> &In, const void *InBytes,
                         uint64_t InLen, uint16_t Kernel, const uint64_t *Args,
                         size_t NumArgs, const std::vector<Piece> &Out,
                         std::vector<HostRange> Into, uint32_t Queue,
                         uint32_t Seq) {
  BatchRef B{Args, NumArgs, In.data(), In.size(), Out.data(), Out.size()};
  return issue(MsgType::Batch, B, Queue, Seq, InBytes, InLen,
               InLen >= kBulkThreshold ? Lane::Bulk : Lane::Session,
               std::move(Into), Kernel);
}

Ticket Connection::retrieve(void *Dst, uint64_t Src, uint64_t Size,
                            uint32_t Queue, uint32_t Seq) {
  Transfer X;
  X.DevicePtr = Src;
  X.Size = Size;
  return issue(MsgType::Retrieve, X, Queue, Seq, nullptr, 0,
               Size >= kBulkThreshold ? Lane::Bulk : Lane::Session,
               {{Dst, Size}});
}

Ticket Connection::loadImage(const void *Image, uint64_t Size,
                             int32_t DeviceNum, int32_t NumDevices) {
  LoadImage L;
  L.Size = Size;
  L.DeviceNum = DeviceNum;
  L.NumDevices = NumDevices;
  return issue(MsgType::LoadImage, L, 0, 0, Image, Size, Lane::Bulk);
}

Ticket Connection::run(uint16_t Kernel, const uint64_t *Args, size_t Count,
                       uint32_t Queue, uint32_t Seq) {
  return issue(MsgType::Run, RunArgs{Args, Count}, Queue, Seq, nullptr, 0,
               Lane::Session, {}, Kernel);
}

Ticket Connection::exchange(uint64_t Src, uint64_t Size, const ServerInfo &Dst,
                            uint64_t DstPtr, uint32_t Queue, uint32_t Seq) {
  ExchangeOut X;
  X.SrcPtr = Src;
  X.Size = Size;
  X.DstPtr = DstPtr;
  X.DstToken = Dst.Token;
  X.PeerAddress = Dst.SessionAddress;
  return issue(MsgType::ExchangeOut, X, Queue, Seq, nullptr, 0, Lane::Session);
}

Ticket Connection::landed(uint32_t Queue, uint32_t Seq) {
  Landed L;
  L.Queue = Queue;
  L.Seq = Seq;
  return issue(MsgType::Landed, L, 0, 0, nullptr, 0, Lane::Session);
}

Ticket Connection::ping() {
  return issue(MsgType::Ping, Empty(), 0, 0, nullptr, 0, Lane::Session);
}

} // namespace ompdpu::client
