//===- request_link.cpp - Requests to one server and their replies -------===//
#include "client/request_link.h"

#include "client/reply_landing.h"
#include "client/waiting_thread.h"
#include "common/log.h"

#include <cstdio>
#include <cstring>
#include <sched.h>

namespace ompdpu::client {

using namespace protocol;
using Clock = std::chrono::steady_clock;

static double secondsSince(Clock::time_point T) {
  return std::chrono::duration<double>(Clock::now() - T).count();
}

RequestLink::RequestLink(const DeviceAddress &A, const ClientConfig &C,
                         Endpoints::WorkerFactory Make)
    : Addr(A), Cfg(C),
      Health({C.ResponseTimeout, C.KernelTimeout, C.HeartbeatInterval,
              // As long as any reply may take: a supervisor that lives
              // explains a lost session, and one that died fails at once.
              C.ResponseTimeout > 0 ? C.ResponseTimeout : 10.0},
             Clock::now()),
      Ends(
          std::move(Make),
          [this](const uint8_t *Ctrl, size_t Len, const transport::BulkData &D,
                 transport::Peer) { return onMessage(Ctrl, Len, D); },
          [this](transport::Peer P, const Status &S) { onPeerError(P, S); }) {
  Trace = C.Trace.Summary;
  if ((Line = Timeline::active()))
    LineDevice = Line->addDevice(Addr.text());
}

RequestLink::~RequestLink() {
  if (Fork.inherited()) {
    Ends.abandon(); // the parent's: its workers stay as they are
    return;
  }
  if (Trace)
    Stats.report(Addr.text());
  Ends.reset(); // while everything its callbacks touch still exists
}

void RequestLink::closeQuietly() {
  std::lock_guard<std::mutex> L(M);
  Failed = true;
  Ends.close();
}

Ticket RequestLink::sendLocked(const Header &H, Lane Via, const void *Data,
                               uint64_t Len, std::vector<HostRange> Into) {
  transport::Peer To = Ends.peer(Via);
  transport::Worker &Wk = Ends.worker(Via);
  bool RunsKernel =
      H.Operand != 0 && (H.Type == MsgType::Run || H.Type == MsgType::Batch);
  // The clock is read only when someone looks at the time later, and before
  // the send: a thread preempted after it would stamp a reply's arrival.
  Clock::time_point Issued;
  if (Trace || (RunsKernel && Cfg.KernelTimeout > 0))
    Issued = Clock::now();
  bool Sent = Wk.trySend(To, SendBuf.data(), SendBuf.size(), Data, Len);
  // The ticket is made once the request is on its way: its allocation is
  // then off the path to the server. Its reply cannot be handled before it
  // is in Pending: replies are handled under M, which this thread holds.
  auto T = std::make_shared<PendingOp>();
  T->Id = H.RequestId;
  T->Type = H.Type;
  T->RunsKernel = RunsKernel;
  T->Issued = Issued;
  T->Queue = H.Queue;
  if (Line) {
    T->Bytes = Len;
    for (const HostRange &R : Into)
      T->Bytes += R.Size;
  }
  T->Into = std::move(Into);
  if (Pending.empty())
    Health.heard(); // silence is only measured while we wait
  Pending.add(T);
  if (!Sent)
    // Only failures need the ticket, and it is in Pending until then: the
    // id and the lane keep this completion small enough not to allocate.
    Wk.send(To, SendBuf, Data, Len, [this, Via, Id = T->Id](const Status &S) {
      if (S.ok())
        return;
      // A send that found its peer gone is the connection's loss, reported
      // as one (with the supervisor's reason when it comes), whichever of
      // the send and the endpoint's error UCX reports first.
      transport::Peer P = Ends.peer(Via);
      if (S.code() == ErrorCode::PeerLost &&
          Ends.roleOf(P) != Endpoints::Role::Unknown) {
        onPeerError(P, S);
        return;
      }
      if (Ticket *Failed = Pending.find(Id))
        completeOp(Ticket(*Failed), S); // already "send failed: ..."
    });
  return T;
}

Ticket RequestLink::refused(MsgType Type, uint32_t Queue, bool Connected) {
  auto T = std::make_shared<PendingOp>();
  T->Type = Type;
  T->Result =
      Failed ? FailStatus
      : !Connected
          ? Status::error("not connected")
          : Status::error(format("queue id %u does not fit the protocol's 16 "
                                 "bits",
                                 Queue));
  T->Done = true;
  return T;
}

Ticket RequestLink::refusedInChild(MsgType Type) const {
  auto T = std::make_shared<PendingOp>();
  T->Type = Type;
  T->Result = Fork.refusal();
  T->Done = true;
  return T;
}

Status RequestLink::failure() const {
  if (Fork.inherited())
    return Fork.refusal();
  std::lock_guard<std::mutex> L(M);
  return FailStatus;
}

void RequestLink::onPeerError(transport::Peer P, const Status &S) {
  switch (Ends.roleOf(P)) {
  case Endpoints::Role::Session:
    // Give the supervisor a moment to say why (checkHealth decides).
    Health.sessionLost(S, Clock::now());
    break;
  case Endpoints::Role::Supervisor:
    // Before the session exists the handshake says "cannot connect".
    failConnection(Ends.hasSession() ? connectionLost(S) : S);
    break;
  case Endpoints::Role::Unknown:
    break;
  }
}

void RequestLink::copyOnArrival(const Ticket &T, const void *From, void *To,
                                uint64_t Size) {
  // Under M: completeOp, which runs the copies, holds it too.
  std::lock_guard<std::mutex> L(M);
  if (!T->Done.load())
    T->Then.push_back({From, To, Size});
  else if (T->Result.ok())
    std::memcpy(To, From, Size);
}

void RequestLink::completeOp(const Ticket &T, const Status &S) {
  if (T->Done.load())
    return;
  if (Trace)
    Stats.add(T->Type, secondsSince(T->Issued) * 1e6);
  if (Line)
    Line->request(LineDevice, T->Type, T->Id, T->Queue, T->Bytes, T->Issued,
                  Clock::now());
  if (!S.ok())
    T->Result = S;
  else
    for (const LateCopy &C : T->Then)
      std::memcpy(C.To, C.From, C.Size);
  T->Done.store(true, std::memory_order_release);
  // Last: T may be the table's own reference (see onMessage).
  Pending.remove(T->Id);
}

void RequestLink::failConnection(const Status &S) {
  if (Failed.exchange(true))
    return;
  // libomptarget aborts the program next, which flushes nothing: what it
  // and the dead kernel printed must be out before.
  std::fflush(stdout);
  FailStatus = S;
  for (Ticket &T : Pending.takeAll()) {
    T->Result = S;
    T->Done.store(true, std::memory_order_release);
  }
}

bool RequestLink::onMessage(const uint8_t *Ctrl, size_t Len,
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
    if (decodeBody(Body, O).ok()) {
      size_t Seen = Written[O.Stream - 1].seen(O.Offset, O.Bytes.size());
      std::fwrite(O.Bytes.data() + Seen, 1, O.Bytes.size() - Seen,
                  O.Stream == 2 ? stderr : stdout);
    }
    return false;
  }
  if (H.Type == MsgType::SessionExit) {
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
  if (H.Type == MsgType::HelloReply || H.Type == MsgType::AuthChallenge) {
    // Read by the handshake, which knows what it means.
    size_t N = Body.remaining();
    const uint8_t *P = Body.view(N);
    T->Payload.assign(P, P + N);
    T->ReplyType = H.Type;
    completeOp(T, Status());
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

bool RequestLink::landReplyBytes(const Ticket &T,
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
    Ends.worker(Lane::Session)
        .receive(Copy, L.Dst, [this, T, Scatter = L.Scatter](const Status &S) {
          if (S.ok() && Scatter)
            scatterInto(*T, T->Payload.data());
          completeOp(T, S);
        });
  });
  return true;
}

void RequestLink::progressLocked() {
  // The supervisor only speaks at set-up, on pings and when the session
  // dies: poll its (TCP) worker now and then (each poll is a system call),
  // and every time once the session is lost; the session's all the time.
  ++ProgressCount;
  if (!Ends.hasSession() || Health.sessionLost() || (ProgressCount & 1023) == 0)
    Ends.progressSupervisor();
  Ends.progressSession();
  while (!Deferred.empty()) {
    auto D = std::move(Deferred);
    Deferred.clear();
    for (auto &F : D)
      F();
    Ends.progressSession();
  }
  // Health checks read the clock: every few rounds is often enough.
  if ((ProgressCount & 15) == 0 || Failed || Health.sessionLost())
    checkHealth();
}

void RequestLink::checkHealth() {
  if (Failed)
    return;
  std::optional<Clock::time_point> OldestKernel;
  if (Cfg.KernelTimeout > 0)
    for (const Ticket &T : Pending)
      if (T->RunsKernel && (!OldestKernel || T->Issued < *OldestKernel))
        OldestKernel = T->Issued;
  auto D = Health.check(Clock::now(), !Pending.empty() && Ends.hasSession(),
                        OldestKernel);
  if (D.What == HealthPolicy::Action::Fail) {
    failConnection(D.Why);
  } else if (D.What == HealthPolicy::Action::Ping) {
    Ends.heartbeat();
  }
}

Status RequestLink::wait(const Ticket &T) {
  // Only waits that block go into the timeline.
  bool Timed = Line && !T->Done.load(std::memory_order_acquire);
  Clock::time_point From = Timed ? Clock::now() : Clock::time_point();
  waitUntil(T, Clock::time_point::max());
  if (Timed)
    Line->wait(LineDevice, T->Type, From, Clock::now());
  return T->Result;
}

bool RequestLink::waitUntil(const Ticket &T, Clock::time_point Deadline) {
  if (Fork.inherited() && !T->Done.load(std::memory_order_acquire)) {
    // Issued by the parent: its reply goes to the parent.
    T->Result = Fork.refusal();
    T->Done.store(true, std::memory_order_release);
    return true;
  }
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
          Sleep = Ends.arm();
      }
    }
    // Other processes on this core (OMPDPU_YIELD) get it every 64 rounds,
    // a few microseconds. Not by default: a thread of this process that
    // runs a long computation would keep it for a whole time slice.
    if (!Sleep && Cfg.YieldWhenIdle && (Round & 63) == 0)
      sched_yield();
    if (Sleep) {
      if (T->Queue) // a region's carrier: see waiting_thread.h
        shortenSliceForWakeups(Cfg.WakeSliceMicros);
      Ends.sleep(5);
      std::lock_guard<std::mutex> L(M);
      Ends.progressSupervisor();
    }
  }
  return true;
}

} // namespace ompdpu::client
