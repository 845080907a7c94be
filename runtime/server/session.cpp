//===- session.cpp - One client's private server process ------------------===//
#include "server/session.h"

#include "common/fifo.h"
#include "common/log.h"
#include "protocol/messages.h"
#include "protocol/session_channel.h"
#include "server/confinement.h"
#include "server/crash_report.h"
#include "server/device_memory.h"
#include "server/kernel_runner.h"
#include "server/kernel_table.h"
#include "server/operations.h"
#include "server/output_capture.h"
#include "server/peer_links.h"
#include "server/queue_sequencer.h"
#include "server/reply_sender.h"
#include "server/request.h"
#include "server/session_trace.h"
#include "transport/shm_files.h"
#include "transport/transport.h"

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <sched.h>
#include <thread>
#include <unistd.h>
#include <unordered_map>

namespace ompdpu::server {

using namespace protocol;
using transport::BulkData;
using transport::Peer;

namespace {

/// The client's endpoints that presented the session token (its control and
/// bulk endpoints). Looked up for every request: a short array.
class ClientEndpoints {
public:
  bool contains(Peer P) const {
    for (size_t K = 0; K < N; ++K)
      if (Peers[K] == P)
        return true;
    return false;
  }
  /// False when the table is full.
  bool insert(Peer P) {
    if (contains(P))
      return true;
    if (N == Peers.size())
      return false;
    Peers[N++] = P;
    return true;
  }
  /// The first endpoint attached (the client's control endpoint), or null.
  Peer first() const { return N ? Peers[0] : nullptr; }

private:
  std::array<Peer, 4> Peers{};
  size_t N = 0;
};

/// A Landed request waiting for its operation's bytes.
struct LandWaiter {
  Header H;
  Peer From;
};

class Session final : public RequestFinisher {
public:
  explicit Session(const SessionOptions &O)
      : Opts(O), Memory(O.MemoryLimit), Runner(loop()) {
    Runner.setTrace(&Trace);
  }
  int run();

  void complete(const Header &Request, Peer From, const Reply &Rep,
                const void *Data, size_t Len,
                std::shared_ptr<void> KeepAlive) override;
  void markLanded(uint32_t Queue, uint32_t Through) override;
  using RequestFinisher::complete;

private:
  bool onMessage(const uint8_t *Ctrl, size_t Len, const BulkData &Data,
                 Peer From);
  /// A request taken in: session-level messages are answered here, the
  /// client's operations admitted to their queue's order.
  void dispatch(Request R);
  /// The operation at the head of Queue is done: start the next one.
  void queueStepDone(uint32_t Queue);
  void landed(const Request &R);
  /// A Trace request: start recording, or hand over what was recorded.
  void trace(Request &R);
  /// Answer R with an error (queue 0: it takes no turn).
  void refuse(Request &R, int32_t Code, const std::string &Msg) {
    R.H.Queue = 0;
    Ops->fail(R, Code, Msg);
  }
  void onPeerError(Peer P, const Status &S);
  /// What the kernel runner needs of this session's loop.
  KernelRunner::Loop loop();
  /// One round of the loop's own work: transport, output, requests.
  unsigned poll();
  bool stopRequested() const {
    return Stop || (Opts.ExternalStop && Opts.ExternalStop->load());
  }
  /// A request just taken off the wire may be carried out from the message
  /// callback (Operations::runNow, batchNow): nothing is waiting in the
  /// intake, its sender attached, and it is its queue's turn with nothing
  /// parked.
  bool inTurnNow(const Header &H, Peer From);

  SessionOptions Opts;
  std::unique_ptr<transport::Worker> W;
  std::unique_ptr<ReplySender> Replies; ///< made once the worker exists
  DeviceMemory Memory;
  KernelTable Kernels;
  KernelRunner Runner;
  std::unique_ptr<Operations> Ops;
  std::unique_ptr<PeerLinks> Peers;
  QueueSequencer<Request, LandWaiter> Sequencer;
  Fifo<Request> Incoming;
  /// The client's endpoints (control and bulk) that presented the token.
  ClientEndpoints ClientPeers;
  SessionTrace Trace;
  bool Stop = false;
};

bool Session::onMessage(const uint8_t *Ctrl, size_t Len, const BulkData &Data,
                        Peer From) {
  Header H;
  Reader Body;
  Status S = parseFrame(Ctrl, Len, H, Body);
  if (!S.ok()) {
    log(LogLevel::Warning, "dropping malformed message: %s",
        S.message().c_str());
    if (H.Magic == kMagic && From && Len >= kHeaderSize) {
      Request Bad;
      Bad.H = H;
      Bad.H.Queue = 0;
      Bad.From = From;
      Reply Rep;
      Rep.Code = kErrInvalid;
      Rep.Message = "malformed message: " + S.message();
      complete(Bad, Rep);
    }
    return false;
  }
  if (H.Type == MsgType::Reply) {
    Peers->onReply(H, Body);
    return false;
  }
  if (Trace.on())
    Trace.arrived(H, From, Data.Length);
  if (H.Type == MsgType::Run && inTurnNow(H, From) &&
      Ops->runNow(H, From, Ctrl + kHeaderSize, Len - kHeaderSize))
    return false;
  if (H.Type == MsgType::Batch && inTurnNow(H, From) &&
      Ops->batchNow(H, From, Ctrl + kHeaderSize, Len - kHeaderSize, Data))
    return false; // its bytes are read: the transport may free them
  Request R;
  R.H = H;
  R.From = From;
  R.Body.assign(Ctrl + kHeaderSize, Ctrl + Len);
  R.Data = Data;
  // Requests are started from the loop, outside UCX's callback.
  Incoming.push(std::move(R));
  return Data.Length != 0;
}

void Session::dispatch(Request R) {
  bool Trusted = R.From && ClientPeers.contains(R.From);
  switch (R.H.Type) {
  case MsgType::Attach: {
    Attach A;
    Reader Rd(R.Body.data(), R.Body.size());
    if (!decodeBody(Rd, A).ok() || A.Token != Opts.Token)
      return refuse(R, kErrNotFound, "wrong session token");
    if (!ClientPeers.insert(R.From))
      return refuse(R, kErrInvalid, "too many endpoints attached");
    R.H.Queue = 0;
    return complete(R, Reply());
  }
  case MsgType::Ping:
    R.H.Queue = 0;
    return complete(R, Reply());
  case MsgType::PeerSubmit:
    R.H.Queue = 0;
    return Ops->peerSubmit(R);
  case MsgType::Bye:
    if (Trusted)
      Stop = true;
    R.H.Queue = 0;
    return complete(R, Reply());
  default:
    break;
  }
  if (!Trusted)
    return refuse(R, kErrInvalid, "peer has not attached to this session");
  if (R.H.Type == MsgType::Landed) {
    R.H.Queue = 0; // waits for nothing itself
    return landed(R);
  }
  if (R.H.Type == MsgType::Trace)
    return trace(R);
  if (R.H.Queue == 0)
    return Ops->start(R, /*FromIntake=*/true);
  switch (Sequencer.admit(R.H.Queue, R.H.Seq, R)) {
  case QueueSequencer<Request, LandWaiter>::Admit::Start:
    // Its turn already (the usual case): start it without parking it.
    return Ops->start(R, /*FromIntake=*/true);
  case QueueSequencer<Request, LandWaiter>::Admit::Parked:
    return;
  case QueueSequencer<Request, LandWaiter>::Admit::Duplicate: {
    return refuse(
        R, kErrInvalid,
        format("duplicate sequence number %u on queue %u", R.H.Seq, R.H.Queue));
  }
  }
}

void Session::complete(const Header &Request, Peer From, const Reply &Rep,
                       const void *Data, size_t Len,
                       std::shared_ptr<void> KeepAlive) {
  uint32_t Queue = Request.Queue;
  if (Trace.on())
    Trace.answered(Request, From, Len);
  // Small replies leave at once; others finish (and free the queue) later.
  if (Replies->reply(Request, From, Rep, Data, Len, std::move(KeepAlive),
                     [this, Queue] { queueStepDone(Queue); }))
    queueStepDone(Queue);
}

void Session::queueStepDone(uint32_t Queue) {
  if (Queue == 0)
    return;
  std::vector<LandWaiter> Ready;
  std::optional<Request> Next = Sequencer.stepDone(Queue, Ready);
  for (const LandWaiter &L : Ready)
    complete(L.H, L.From, Reply());
  if (Next)
    Ops->start(*Next, /*FromIntake=*/false);
}

void Session::markLanded(uint32_t Queue, uint32_t Through) {
  std::vector<LandWaiter> Ready;
  Sequencer.landed(Queue, Through, Ready);
  for (const LandWaiter &L : Ready)
    complete(L.H, L.From, Reply());
}

void Session::landed(const Request &R) {
  Landed L;
  Reader Rd(R.Body.data(), R.Body.size());
  if (!decodeBody(Rd, L).ok() || L.Queue == 0 || L.Queue > kMaxQueueId)
    return Ops->fail(R, kErrInvalid, "malformed Landed");
  if (!Sequencer.waitLanded(L.Queue, L.Seq, {R.H, R.From}))
    complete(R, Reply());
}

void Session::trace(Request &R) {
  TraceControl C;
  Reader Rd(R.Body.data(), R.Body.size());
  if (!decodeBody(Rd, C).ok())
    return refuse(R, kErrInvalid, "malformed Trace");
  R.H.Queue = 0;
  Reply Rep;
  if (C.Action == TraceAction::Start) {
    Trace.start();
    Rep.Value = steadyNowNs();
    return complete(R, Rep);
  }
  auto Bytes = std::make_shared<std::vector<uint8_t>>(
      encodeTraceRecord(Trace.collect()));
  Rep.Value = steadyNowNs();
  complete(R, Rep, Bytes->data(), Bytes->size(), Bytes);
}

void Session::onPeerError(Peer P, const Status &S) {
  if (ClientPeers.contains(P)) {
    Stop = true;
    return;
  }
  Peers->onPeerError(P, S);
  W->closePeer(P);
}

int Session::run() {
  // Large replies (device -> host data) are pushed from here, and large
  // submits pulled from here: the host's cores never copy mapped data.
  auto Created = transport::Worker::create(Opts.Transports,
                                           /*SenderCopies=*/true);
  if (!Created) {
    log(LogLevel::Error, "session: %s", Created.status().message().c_str());
    return 1;
  }
  W = std::move(*Created);
  Peers = std::make_unique<PeerLinks>(*W);
  Replies = std::make_unique<ReplySender>(*W, OutputCapture::active());
  Ops = std::make_unique<Operations>(
      Operations::Parts{*W, *this, Memory, Kernels, Runner, Opts.Token});
  Ops->setPeerLinks(Peers.get());
  if (OutputCapture *C = OutputCapture::active())
    C->setWake([this] { W->signal(); });
  W->setHandler([this](const uint8_t *C, size_t L, const BulkData &D, Peer F) {
    return onMessage(C, L, D, F);
  });
  W->setPeerErrorHandler(
      [this](Peer P, const Status &S) { onPeerError(P, S); });

  // Tell the supervisor where to find us.
  SessionReady Ready;
  Ready.Address = W->address();
  Ready.ShmFiles = transport::sharedMemoryFiles();
  if (Ready.ShmFiles.size() > kMaxShmFiles)
    Ready.ShmFiles.resize(kMaxShmFiles);
  Header RH;
  RH.Type = MsgType::SessionReady;
  if (Status S = sendChannelFrame(Opts.ControlFd, frame(RH, Ready)); !S.ok()) {
    log(LogLevel::Error, "session: %s", S.message().c_str());
    return 1;
  }

  Runner.run();
  // Every other thread has ended; let the last replies (the answer to Bye)
  // leave before returning.
  for (int K = 0; K < 100000 && W->inFlight(); ++K)
    W->progress();
  return 0;
}

bool Session::inTurnNow(const Header &H, Peer From) {
  // Requests taken in earlier go first; anything unusual goes the usual way.
  if (!Incoming.empty() || !From || !ClientPeers.contains(From))
    return false;
  if (!H.Queue)
    return true;
  return Sequencer.inTurnAlone(H.Queue, H.Seq);
}

KernelRunner::Loop Session::loop() {
  KernelRunner::Loop L;
  L.Poll = [this] { return poll(); };
  L.Done = [this](const KernelJob &Job) { Ops->kernelDone(Job); };
  L.StopRequested = [this] { return stopRequested(); };
  L.Sleep = [this](int Ms) { W->wait(Ms); };
  L.Wake = [this] { W->signal(); };
  L.IdleHook = Opts.IdleHook;
  L.SpinMicros = Opts.SpinMicros;
  L.SharedCores = Opts.SharedCores;
  return L;
}

unsigned Session::poll() {
  unsigned N = Replies->progress();
  if (Replies->outputPending())
    Replies->sendOutput(ClientPeers.first());
  while (!Incoming.empty()) {
    dispatch(Incoming.pop());
    ++N;
  }
  return N;
}

} // namespace

int runSessionInProcess(const SessionOptions &Opts) {
  Session S(Opts);
  return S.run();
}

int runSession(const SessionOptions &Opts) {
  // Before any thread starts: a seccomp filter covers the threads made after.
  if (Status S = confineSession(Opts.SameHost); !S.ok()) {
    log(LogLevel::Error, "session: cannot confine it: %s", S.message().c_str());
    _exit(1);
  }
  SessionOptions Confined = Opts;
  if (!Opts.SameHost) {
    // Without capabilities a session may not read a non-dumpable peer's
    // memory (cma) nor open its descriptors through /proc (UCX's posix
    // segments): peer sessions on one machine share memory by name, in
    // POSIX segments (the owner's alone; System V ones are group-readable).
    if (Confined.Transports.empty())
      Confined.Transports = "^cma,sysv";
    setenv("UCX_POSIX_USE_PROC_LINK", "n", /*overwrite=*/0);
  }
  installCrashReporter(Opts.ControlFd);
  if (Opts.OutputFd >= 0)
    OutputCapture::install(Opts.OutputFd);
  Session S(Confined);
  int Rc = S.run();
  if (OutputCapture *C = OutputCapture::active())
    C->stop();
  // Kernels may still run on executor threads (the client left without
  // waiting): do not wait for them.
  std::fflush(stderr);
  _exit(Rc);
}

} // namespace ompdpu::server
