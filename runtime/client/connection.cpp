//===- connection.cpp - Protocol client for one DPU server ----------------===//
#include "client/connection.h"

#include "client/reply_landing.h"
#include "common/log.h"

#include <cstdio>
#include <cstring>
#include <poll.h>
#include <sched.h>
#include <unistd.h>

namespace ompdpu::client {

using namespace protocol;

/// Transfers at least this big use the bulk endpoint (rendezvous sizes).
constexpr uint64_t kBulkThreshold = 8192;
using Clock = std::chrono::steady_clock;

static double secondsSince(Clock::time_point T) {
  return std::chrono::duration<double>(Clock::now() - T).count();
}

Connection::Connection(const DeviceAddress &A, const ClientConfig &C)
    : Addr(A), Cfg(C),
      Health({C.ResponseTimeout, C.KernelTimeout, C.HeartbeatInterval},
             Clock::now()) {
  const char *T = std::getenv("OMPDPU_TRACE");
  Trace = T && *T && std::string(T) != "0";
}

Status Connection::failure() const {
  std::lock_guard<std::mutex> L(M);
  return FailStatus;
}

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

Clock::time_point Connection::connectDeadline(const ClientConfig &Cfg) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(Cfg.ConnectTimeout));
}

Expected<std::unique_ptr<Connection>>
Connection::start(const DeviceAddress &A, const ClientConfig &Cfg,
                  const std::string &WantIsa, WorkerFactory Make) {
  std::unique_ptr<Connection> C(new Connection(A, Cfg));
  C->MakeWorker = Make ? std::move(Make) : [](const std::string &Tls) {
    return transport::Worker::create(Tls);
  };
  auto Created = C->MakeWorker("");
  if (!Created)
    return Created.status();
  C->SupW = std::move(*Created);
  C->installHandlers(*C->SupW);
  Status S = C->sendHello(WantIsa);
  if (!S.ok())
    return S;
  return C;
}

Status Connection::finish(Clock::time_point Deadline) {
  return explainConnectFailure(completeHandshake(Deadline));
}

void Connection::installHandlers(transport::Worker &Wk) {
  Wk.setHandler([this](const uint8_t *Ctrl, size_t Len,
                       const transport::BulkData &D,
                       transport::Peer) { return onMessage(Ctrl, Len, D); });
  Wk.setPeerErrorHandler([this](transport::Peer P, const Status &S) {
    if (P == SessionEp || P == BulkEp) {
      // Give the supervisor a moment to say why (checkHealth decides).
      Health.sessionLost(S, Clock::now());
    } else if (P == SupervisorEp) {
      failConnection(
          S.withContext(SessionEp ? "connection lost" : "cannot connect"));
    }
  });
}

Status Connection::sendHello(const std::string &WantIsa) {
  auto Sup = SupW->connect({Addr.Host, Addr.Port});
  if (!Sup)
    return Sup.status().withContext("cannot connect");
  SupervisorEp = *Sup;
  Hello Hi = helloFor(WantIsa);
  Ticket T;
  {
    std::lock_guard<std::mutex> L(M);
    T = std::make_shared<PendingOp>();
    T->Id = newId();
    T->Type = MsgType::Hello;
    T->Issued = Clock::now();
    Pending.add(T);
    Health.heard();
    Header H;
    H.Type = MsgType::Hello;
    H.RequestId = T->Id;
    SupW->send(SupervisorEp, frame(H, Hi), nullptr, 0,
               [this, T](const Status &S) {
                 if (!S.ok())
                   completeOp(T, S.withContext("cannot connect"));
               });
  }
  HelloTicket = T;
  return Status();
}

Status Connection::completeHandshake(Clock::time_point Deadline) {
  Ticket T = std::move(HelloTicket);
  if (!T)
    return Status::error("cannot connect: no handshake under way");
  // The handshake has its own (connect) timeout.
  if (!waitUntil(T, Deadline)) {
    std::lock_guard<std::mutex> L(M);
    completeOp(T, Status::error(format("cannot connect: no answer within "
                                       "%.1f s (OMPDPU_CONNECT_TIMEOUT)",
                                       Cfg.ConnectTimeout)));
  }
  if (!T->Result.ok())
    return T->Result;
  // Info was filled by onMessage from the HelloReply. The session's
  // transports match the ones chosen here (see the supervisor).
  auto Data = MakeWorker(transport::sessionTransports(Info.SameHost));
  if (!Data)
    return Data.status();
  {
    std::lock_guard<std::mutex> L(M);
    W = std::move(*Data);
    installHandlers(*W);
  }
  auto Ses = W->connectToWorker(Info.SessionAddress);
  if (!Ses)
    return Ses.status().withContext("cannot reach session");
  SessionEp = *Ses;
  Attach At;
  At.Token = Info.Token;
  Ticket A = issue(MsgType::Attach, At, 0, 0, nullptr, 0, Lane::Session);
  Status S = wait(A);
  if (!S.ok())
    return S.withContext("cannot attach to session");
  // The bulk endpoint cannot report a dead session (that is what lets UCX
  // use cma, zero copy between processes); the session endpoint above
  // watches over it. It attaches with the same token.
  auto Bulk = W->connectToWorker(Info.SessionAddress,
                                 /*DetectPeerFailure=*/false);
  if (!Bulk)
    return Bulk.status().withContext("cannot reach session");
  BulkEp = *Bulk;
  S = wait(issue(MsgType::Attach, At, 0, 0, nullptr, 0, Lane::Bulk));
  if (!S.ok())
    return S.withContext("cannot attach bulk endpoint to session");
  if (Trace)
    log(LogLevel::Info, "%s: bulk endpoint:\n%s", Addr.text().c_str(),
        W->describe(BulkEp).c_str());
  return Status();
}

Connection::~Connection() {
  if (Trace)
    for (unsigned K = 0; K < TraceStats.size(); ++K)
      if (TraceStats[K].second)
        log(LogLevel::Info,
            "%s: %s: %lu requests, %.2f us from issue to "
            "completion on average",
            Addr.text().c_str(), typeName(static_cast<MsgType>(K)),
            TraceStats[K].second, TraceStats[K].first / TraceStats[K].second);
  if (SupW && alive()) {
    // Orderly goodbye, bounded in time; failures here change nothing.
    // (A failed connection completes both tickets at once.)
    auto Deadline = Clock::now() + std::chrono::seconds(1);
    waitUntil(issue(MsgType::Bye, Empty(), 0, 0, nullptr, 0, Lane::Session),
              Deadline);
    waitUntil(issue(MsgType::Bye, Empty(), 0, 0, nullptr, 0, Lane::Supervisor),
              Deadline);
  }
  {
    std::lock_guard<std::mutex> L(M);
    Failed = true; // ignore the errors the closes below may report
    if (W) {
      W->setPeerErrorHandler(nullptr);
      W->closePeer(BulkEp);
      W->closePeer(SessionEp);
    }
    if (SupW) {
      SupW->setPeerErrorHandler(nullptr);
      SupW->closePeer(SupervisorEp);
    }
  }
  W.reset();
  SupW.reset();
}

template <typename Body>
Ticket Connection::issue(MsgType Type, const Body &B, uint32_t Queue,
                         uint32_t Seq, const void *Data, uint64_t Len, Lane Via,
                         std::vector<HostRange> Into, uint16_t Operand) {
  std::lock_guard<std::mutex> L(M);
  void *To = Via == Lane::Supervisor       ? SupervisorEp
             : Via == Lane::Bulk && BulkEp ? BulkEp
                                           : SessionEp;
  if (Failed || !To || Queue > kMaxQueueId) {
    auto T = std::make_shared<PendingOp>();
    T->Type = Type;
    T->Result =
        Failed ? FailStatus
        : !To  ? Status::error("not connected")
               : Status::error(format(
                     "queue id %u does not fit the protocol's 16 bits", Queue));
    T->Done = true;
    return T;
  }
  Header H;
  H.Type = Type;
  H.RequestId = newId();
  H.Queue = static_cast<uint16_t>(Queue);
  H.Operand = Operand;
  H.Seq = Seq;
  frameInto(SendBuf, H, B);
  transport::Worker &Wk = Via == Lane::Supervisor ? *SupW : *W;
  bool Sent = Wk.trySend(To, SendBuf.data(), SendBuf.size(), Data, Len);
  // The ticket is made once the request is on its way: its allocation is
  // then off the path to the server. Its reply cannot be handled before it
  // is in Pending: replies are handled under M, which this thread holds.
  auto T = std::make_shared<PendingOp>();
  T->Id = H.RequestId;
  T->Type = Type;
  // The clock is read only when someone looks at the time later.
  T->RunsKernel =
      Operand != 0 && (Type == MsgType::Run || Type == MsgType::Batch);
  if (Trace || (T->RunsKernel && Cfg.KernelTimeout > 0))
    T->Issued = Clock::now();
  T->Into = std::move(Into);
  if (Pending.empty())
    Health.heard(); // silence is only measured while we wait
  Pending.add(T);
  if (!Sent)
    // Only failures need the ticket, and it is in Pending until then: the
    // id alone keeps this completion small enough not to allocate.
    Wk.send(To, SendBuf, Data, Len, [this, Id = T->Id](const Status &S) {
      if (S.ok())
        return;
      if (Ticket *Failed = Pending.find(Id))
        completeOp(Ticket(*Failed), S); // already "send failed: ..."
    });
  return T;
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

Ticket Connection::loadImage(const void *Image, uint64_t Size) {
  LoadImage L;
  L.Size = Size;
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

void Connection::copyOnArrival(const Ticket &T, const void *From, void *To,
                               uint64_t Size) {
  // Under M: completeOp, which runs the copies, holds it too.
  std::lock_guard<std::mutex> L(M);
  if (!T->Done.load())
    T->Then.push_back({From, To, Size});
  else if (T->Result.ok())
    std::memcpy(To, From, Size);
}

void Connection::completeOp(const Ticket &T, const Status &S) {
  if (T->Done.load())
    return;
  if (Trace) {
    auto &Slot = TraceStats[static_cast<unsigned>(T->Type)];
    Slot.first += secondsSince(T->Issued) * 1e6;
    ++Slot.second;
  }
  if (!S.ok())
    T->Result = S;
  else
    for (const LateCopy &C : T->Then)
      std::memcpy(C.To, C.From, C.Size);
  T->Done.store(true, std::memory_order_release);
  // Last: T may be the table's own reference (see onMessage).
  Pending.remove(T->Id);
}

void Connection::failConnection(const Status &S) {
  if (Failed.exchange(true))
    return;
  FailStatus = S;
  for (Ticket &T : Pending.takeAll()) {
    T->Result = S;
    T->Done.store(true, std::memory_order_release);
  }
}

bool Connection::onMessage(const uint8_t *Ctrl, size_t Len,
                           const transport::BulkData &Data) {
  Health.heard();
  Header H;
  Reader Body;
  Status S = parseFrame(Ctrl, Len, H, Body);
  if (!S.ok()) {
    log(LogLevel::Warning, "device %s: dropping malformed message: %s",
        Addr.text().c_str(), S.message().c_str());
    return false;
  }
  if (H.Type == MsgType::Output) {
    // Into the program's own streams, in order with what it printed itself
    // (the host plugin's kernels share them too).
    Output O;
    if (decodeBody(Body, O).ok())
      std::fwrite(O.Bytes.data(), 1, O.Bytes.size(),
                  O.Stream == 2 ? stderr : stdout);
    return false;
  }
  if (H.Type == MsgType::SessionExit) {
    // libomptarget aborts the program next, which flushes nothing: what the
    // dead kernel printed must be out before.
    std::fflush(stdout);
    SessionExit X;
    if (decodeBody(Body, X).ok())
      SessionExitMessage = X.Message;
    else
      SessionExitMessage = "session process ended";
    failConnection(Status::error(SessionExitMessage));
    return false;
  }
  Ticket *Found = Pending.find(H.RequestId);
  if (!Found)
    return false; // a late answer to something already failed
  // The table's reference, not a copy (a copy is two atomic operations on
  // the launch path): completeOp() removes it from the table last, and
  // nothing below touches T after completeOp().
  const Ticket &T = *Found;
  if (H.Type == MsgType::HelloReply) {
    auto Got = acceptHelloReply(Body);
    if (Got)
      Info = std::move(*Got);
    completeOp(T, Got ? Status() : Got.status());
    return false;
  }
  Reply R;
  if (H.Type != MsgType::Reply || !decodeBody(Body, R).ok()) {
    completeOp(T, Status::error("malformed reply"));
    return false;
  }
  if (R.Code != kOk) {
    completeOp(T, Status::error(errorCodeOf(R.Code), R.Message));
    return false;
  }
  T->Value = R.Value;
  return landReplyBytes(T, Data);
}

bool Connection::landReplyBytes(const Ticket &T,
                                const transport::BulkData &Data) {
  Landing L = planLanding(*T, Data.Length, Data.Rendezvous);
  if (!L.Error.ok() || L.Done) {
    completeOp(T, L.Error);
    return false;
  }
  if (!Data.Rendezvous) {
    // Eager bytes are at hand (UCX frees them when this returns): copy
    // them now rather than keep them for a trip through Deferred.
    if (L.Scatter)
      scatterInto(*T, static_cast<const uint8_t *>(Data.Desc));
    else
      std::memcpy(L.Dst, Data.Desc, Data.Length);
    completeOp(T, Status());
    return false;
  }
  // Fetch rendezvous bytes outside UCX's callback, straight into their
  // destination.
  transport::BulkData Copy = Data;
  Deferred.push_back([this, T, Copy, L] {
    W->receive(Copy, L.Dst, [this, T, Scatter = L.Scatter](const Status &S) {
      if (S.ok() && Scatter)
        scatterInto(*T, T->Payload.data());
      completeOp(T, S);
    });
  });
  return true;
}

void Connection::progressLocked() {
  // The supervisor only speaks at set-up, on pings and when the session
  // dies: poll its (TCP) worker now and then (each poll is a system call),
  // and every time once the session is lost; the session's all the time.
  ++ProgressCount;
  if (!W || Health.sessionLost() || (ProgressCount & 1023) == 0)
    SupW->progress();
  if (W) {
    W->progress();
    while (!Deferred.empty()) {
      auto D = std::move(Deferred);
      Deferred.clear();
      for (auto &F : D)
        F();
      W->progress();
    }
  }
  // Health checks read the clock: every few rounds is often enough.
  if ((ProgressCount & 15) == 0 || Failed || Health.sessionLost())
    checkHealth();
}

void Connection::checkHealth() {
  if (Failed)
    return;
  std::optional<Clock::time_point> OldestKernel;
  if (Cfg.KernelTimeout > 0)
    for (const Ticket &T : Pending)
      if (T->RunsKernel && (!OldestKernel || T->Issued < *OldestKernel))
        OldestKernel = T->Issued;
  auto D =
      Health.check(Clock::now(), !Pending.empty() && SessionEp, OldestKernel);
  if (D.What == HealthPolicy::Action::Fail) {
    failConnection(D.Why);
  } else if (D.What == HealthPolicy::Action::Ping) {
    Header H;
    H.Type = MsgType::Ping;
    H.RequestId = 0; // answers to id 0 are ignored; any answer proves life
    // The session may be busy in a kernel; the supervisor answers for the
    // server as a whole. Silence from both means the server is frozen.
    W->send(SessionEp, frame(H, Empty()), nullptr, 0, nullptr);
    SupW->send(SupervisorEp, frame(H, Empty()), nullptr, 0, nullptr);
  }
}

Status Connection::wait(const Ticket &T) {
  waitUntil(T, Clock::time_point::max());
  return T->Result;
}

bool Connection::waitUntil(const Ticket &T, Clock::time_point Deadline) {
  // Most waits end within a few rounds: read the clock only after 32.
  Clock::time_point SpinUntil;
  for (unsigned Round = 1; !T->Done.load(std::memory_order_acquire); ++Round) {
    bool Sleep = false;
    {
      std::lock_guard<std::mutex> L(M);
      progressLocked();
      if (!T->Done.load() && (Round & 31) == 0) {
        auto Now = Clock::now();
        if (Now > Deadline)
          return false;
        if (Round == 32)
          SpinUntil =
              Now +
              std::chrono::duration_cast<Clock::duration>(
                  std::chrono::duration<double, std::micro>(Cfg.SpinMicros));
        else if (Now > SpinUntil)
          Sleep = SupW->arm() && (!W || W->arm());
      }
    }
    // Other processes on this core (OMPDPU_YIELD) get it every 64 rounds,
    // a few microseconds. Not by default: a thread of this process that
    // runs a long computation would keep it for a whole time slice.
    if (!Sleep && Cfg.YieldWhenIdle && (Round & 63) == 0)
      sched_yield();
    if (Sleep) {
      // Bounded sleep: another thread may consume our wake-up, and health
      // checks must run even when nothing arrives.
      pollfd P[2] = {{SupW->eventFd(), POLLIN, 0},
                     {W ? W->eventFd() : -1, POLLIN, 0}};
      poll(P, W ? 2 : 1, 5);
      std::lock_guard<std::mutex> L(M);
      SupW->progress();
    }
  }
  return true;
}

} // namespace ompdpu::client
