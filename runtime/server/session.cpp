//===- session.cpp - One client's private server process ------------------===//
#include "server/session.h"

#include "common/fifo.h"
#include "common/log.h"
#include "protocol/messages.h"
#include "protocol/session_channel.h"
#include "server/crash_report.h"
#include "server/device_memory.h"
#include "server/executor.h"
#include "server/image_loader.h"
#include "server/output_capture.h"
#include "server/peer_links.h"
#include "server/queue_sequencer.h"
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

/// Largest device image accepted.
constexpr uint64_t kMaxImageSize = 1ull << 30;
/// Largest total of a Batch's out pieces: they return in one reply.
constexpr uint64_t kMaxBatchOut = 1 << 20;

/// A request's body, copied out of UCX's buffer. Most bodies are small:
/// they live inline, without an allocation per request.
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
  Header H;
  Peer From = nullptr;
  FrameBody Body;
  BulkData Data;
};

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

class Session {
public:
  explicit Session(const SessionOptions &O) : Opts(O), Memory(O.MemoryLimit) {}
  int run();

private:
  // Message intake.
  bool onMessage(const uint8_t *Ctrl, size_t Len, const BulkData &Data,
                 Peer From);
  void dispatch(Request R);
  /// FromIntake: the request just arrived (not started when its predecessor
  /// finished).
  void start(const Request &R, bool FromIntake = false);
  // Finishing a request: send its reply, then let its queue move on.
  void complete(const Request &R, const Reply &Rep, const void *Data = nullptr,
                size_t Len = 0, std::shared_ptr<void> KeepAlive = nullptr) {
    complete(R.H, R.From, Rep, Data, Len, std::move(KeepAlive));
  }
  /// The same for a request known by its header and sender alone.
  void complete(const Header &Request, Peer From, const Reply &Rep,
                const void *Data = nullptr, size_t Len = 0,
                std::shared_ptr<void> KeepAlive = nullptr);
  /// The operation at the head of Queue is done: start the next one.
  void queueStepDone(uint32_t Queue);
  /// Send what kernels printed to To (before a reply: it must arrive
  /// first).
  void sendOutput(Peer To);
  /// Progress the worker; output sends may complete in it (see HandOver).
  unsigned progress() {
    if (!Capture || !Capture->inFlight())
      return W->progress();
    OutputCapture::HandOver H;
    return W->progress();
  }
  OutputCapture *Capture = OutputCapture::active();
  /// Operations of Queue numbered below Through have their bytes in place:
  /// answer the Landed requests waiting for them.
  void markLanded(uint32_t Queue, uint32_t Through);
  void doLanded(const Request &R);
  void fail(const Request &R, int32_t Code, const std::string &Msg) {
    Reply Rep;
    Rep.Code = Code;
    Rep.Message = Msg;
    if (Data(R))
      W->release(R.Data);
    complete(R, std::move(Rep));
  }
  static bool Data(const Request &R) { return R.Data.Length != 0; }
  // Operations.
  void doAlloc(const Request &R);
  void doFree(const Request &R);
  void doSubmit(const Request &R, bool FromPeer);
  void doRetrieve(const Request &R);
  void doBatch(const Request &R, bool FromIntake);
  /// Why a Batch cannot be carried out (Code kOk: it can). Every piece is
  /// checked before any byte is written.
  Reply vetBatch(uint16_t Kernel, const BatchView &B, size_t DataLen);
  /// A Batch whose in bytes are in place: run its kernel, if any, then
  /// answer with its out bytes.
  void runBatch(const Header &H, Peer From, const BatchView &B,
                bool FromIntake);
  /// Answer a request with the bytes of Out (a vector of pieces or a
  /// BatchView's OutPieces), back to back.
  template <typename PieceList>
  void answerWith(const Header &H, Peer From, const PieceList &Out);
  /// A Batch in its turn whose kernel, if any, is short is carried out and
  /// answered from the message callback, as runNow() does for a Run. False
  /// when it must take the usual way (which also reports its errors).
  bool batchNow(const Header &H, Peer From, const uint8_t *Body, size_t Len,
                const BulkData &Data);
  void doLoad(const Request &R);
  void doRun(const Request &R, bool FromIntake);
  void doExchange(const Request &R);
  /// Answer a finished kernel's Run request (from any thread).
  void kernelDone(const KernelJob &Job, bool OnLoopThread);
  /// Out pieces are gathered here for their reply; a new buffer is made
  /// only while UCX still reads the last one.
  std::shared_ptr<std::vector<uint8_t>> GatherBuf;
  void onPeerError(Peer P, const Status &S);
  void runOnLoop(std::function<void()> F);
  // Leader/followers: one thread at a time (the leader) runs the loop and
  // owns all session state. A leader that picks up a kernel hands the loop
  // to a follower and runs the kernel itself, so a kernel starts without a
  // thread hand-off and the session keeps serving while it runs.
  void threadMain(bool Original);
  void lead();
  bool stopRequested() const {
    return Stop || (Opts.ExternalStop && Opts.ExternalStop->load());
  }
  /// Call the kernel; returns its run time in microseconds when Timed.
  double runKernel(KernelInfo &K, const uint64_t *Args, size_t Count,
                   bool Timed);
  /// Kernels known to be short run on the loop thread, without waking
  /// another: the hand-off would cost more than the kernel.
  bool runsInline(const KernelInfo &K) const {
    return K.Timing.Runs >= 2 && K.Timing.AverageMicros < kInlineKernelMicros;
  }
  /// Run a short kernel here, on the loop thread, and answer it.
  void runInline(KernelJob &Job);
  /// Call a kernel known to be short, timing every 8th call.
  void callShort(KernelInfo &K, const uint64_t *Args, size_t Count);
  /// A Run of a short kernel that arrives in its turn runs and is answered
  /// from the message callback: no copy of the request, no trip through
  /// the intake. False when it must take the usual way (which also reports
  /// its errors).
  bool runNow(const Header &H, Peer From, const uint8_t *Body, size_t Len);
  /// A request just taken off the wire may be carried out from the message
  /// callback (runNow, batchNow): nothing is waiting in the intake, its
  /// sender attached, and it is its queue's turn with nothing parked.
  bool inTurnNow(const Header &H, Peer From);
  static constexpr size_t kRunNowArgs = 16;
  /// The kernel a Run names by its handle (1, 2, ...), or null.
  KernelInfo *kernelOf(uint16_t Handle) {
    return Handle && Handle <= Kernels.size() ? &Kernels[Handle - 1] : nullptr;
  }

  SessionOptions Opts;
  std::unique_ptr<transport::Worker> W;
  Fifo<KernelJob> ReadyKernels;
  static constexpr unsigned kMaxThreads = 16;
  /// Kernel handles are 16 bits (the header's Operand).
  static constexpr size_t kMaxKernels = 0xffff;
  /// Kernels that took less than this (on average) run on the loop thread.
  static constexpr double kInlineKernelMicros = 200;
  std::mutex FollowM; // guards the five members below
  std::condition_variable FollowCV;
  bool LeaderActive = false, LeaderWanted = false, Stopping = false;
  unsigned IdleFollowers = 0;
  std::vector<std::thread> Threads;
  DeviceMemory Memory;
  std::vector<std::unique_ptr<LoadedImage>> Images;
  /// Kernels of the loaded images; handle h (what Run names) is element
  /// h-1. A deque: elements never move, and jobs point to them.
  std::deque<KernelInfo> Kernels;
  QueueSequencer<Request, LandWaiter> Sequencer;
  Fifo<Request> Incoming;
  std::vector<uint8_t> SendBuf; ///< replies are encoded here (loop only)
  /// The client's endpoints (control and bulk) that presented the token.
  ClientEndpoints ClientPeers;
  bool Stop = false;
  /// Copies to peer sessions (made once the worker exists).
  std::unique_ptr<PeerLinks> Peers;
  // Work finished on executor threads, to be completed on the loop thread.
  std::mutex DoneM;
  std::vector<std::function<void()>> DoneQueue;
  std::atomic<bool> HaveDone{false}; // lets the loop skip DoneM when idle
};

void Session::runOnLoop(std::function<void()> F) {
  {
    std::lock_guard<std::mutex> L(DoneM);
    DoneQueue.push_back(std::move(F));
    HaveDone.store(true, std::memory_order_release);
  }
  W->signal();
}

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
  if (H.Type == MsgType::Run &&
      runNow(H, From, Ctrl + kHeaderSize, Len - kHeaderSize))
    return false;
  if (H.Type == MsgType::Batch &&
      batchNow(H, From, Ctrl + kHeaderSize, Len - kHeaderSize, Data))
    return false; // its bytes are read: UCX may free them
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
    if (!decodeBody(Rd, A).ok() || A.Token != Opts.Token) {
      R.H.Queue = 0;
      return fail(R, kErrNotFound, "wrong session token");
    }
    if (!ClientPeers.insert(R.From)) {
      R.H.Queue = 0;
      return fail(R, kErrInvalid, "too many endpoints attached");
    }
    R.H.Queue = 0;
    return complete(R, Reply());
  }
  case MsgType::Ping:
    R.H.Queue = 0;
    return complete(R, Reply());
  case MsgType::PeerSubmit:
    R.H.Queue = 0;
    return doSubmit(R, /*FromPeer=*/true);
  case MsgType::Bye:
    if (Trusted)
      Stop = true;
    R.H.Queue = 0;
    return complete(R, Reply());
  default:
    break;
  }
  if (!Trusted) {
    R.H.Queue = 0;
    return fail(R, kErrInvalid, "peer has not attached to this session");
  }
  if (R.H.Type == MsgType::Landed) {
    R.H.Queue = 0; // waits for nothing itself
    return doLanded(R);
  }
  if (R.H.Queue == 0)
    return start(std::move(R), /*FromIntake=*/true);
  switch (Sequencer.admit(R.H.Queue, R.H.Seq, R)) {
  case QueueSequencer<Request, LandWaiter>::Admit::Start:
    // Its turn already (the usual case): start it without parking it.
    return start(std::move(R), /*FromIntake=*/true);
  case QueueSequencer<Request, LandWaiter>::Admit::Parked:
    return;
  case QueueSequencer<Request, LandWaiter>::Admit::Duplicate: {
    uint32_t Queue = R.H.Queue;
    R.H.Queue = 0;
    return fail(
        R, kErrInvalid,
        format("duplicate sequence number %u on queue %u", R.H.Seq, Queue));
  }
  }
}

void Session::complete(const Header &Request, Peer From, const Reply &Rep,
                       const void *Data, size_t Len,
                       std::shared_ptr<void> KeepAlive) {
  uint32_t Queue = Request.Queue;
  if (From) {
    if (Capture && Capture->pending())
      sendOutput(From);
    Header H;
    H.Type = MsgType::Reply;
    H.RequestId = Request.RequestId;
    H.Queue = Request.Queue;
    H.Seq = Request.Seq;
    frameInto(SendBuf, H, Rep);
    // Small replies leave at once; others finish (and free the queue) later.
    if (!W->trySend(From, SendBuf.data(), SendBuf.size(), Data, Len,
                    /*NeedsAnswer=*/false)) {
      W->send(
          From, SendBuf, Data, Len,
          [this, Queue, KeepAlive = std::move(KeepAlive)](const Status &S) {
            if (!S.ok())
              OMPDPU_DEBUG_LOG("reply not delivered: %s", S.message().c_str());
            queueStepDone(Queue);
          },
          /*NeedsAnswer=*/false);
      return;
    }
  }
  queueStepDone(Queue);
}

void Session::sendOutput(Peer To) {
  if (!To)
    return;
  OutputCapture::HandOver H;
  auto Send = [&](int Stream, const char *Data, size_t Len) {
    // A piece's bytes leave the ring once UCX has them (sends on one
    // endpoint complete in order).
    W->send(
        To, outputFrame(static_cast<uint8_t>(Stream), Data, Len), nullptr, 0,
        [this, Stream, Len](const Status &) { Capture->sent(Stream, Len); },
        /*NeedsAnswer=*/false);
  };
  for (int S = 1; S <= 2; ++S)
    if (uint64_t N = Capture->takeDropped(S)) {
      std::string Note = format("[ompdpu: %lu bytes of device output lost: "
                                "the output buffer was full]\n",
                                (unsigned long)N);
      W->send(To,
              outputFrame(static_cast<uint8_t>(S), Note.data(), Note.size()),
              nullptr, 0, nullptr, /*NeedsAnswer=*/false);
    }
  Capture->drain(Output::kMaxBytes, Send);
}

void Session::queueStepDone(uint32_t Queue) {
  if (Queue == 0)
    return;
  std::vector<LandWaiter> Ready;
  std::optional<Request> Next = Sequencer.stepDone(Queue, Ready);
  for (const LandWaiter &L : Ready)
    complete(L.H, L.From, Reply());
  if (Next)
    start(std::move(*Next));
}

void Session::markLanded(uint32_t Queue, uint32_t Through) {
  std::vector<LandWaiter> Ready;
  Sequencer.landed(Queue, Through, Ready);
  for (const LandWaiter &L : Ready)
    complete(L.H, L.From, Reply());
}

void Session::doLanded(const Request &R) {
  Landed L;
  Reader Rd(R.Body.data(), R.Body.size());
  if (!decodeBody(Rd, L).ok() || L.Queue == 0 || L.Queue > kMaxQueueId)
    return fail(R, kErrInvalid, "malformed Landed");
  if (!Sequencer.waitLanded(L.Queue, L.Seq, {R.H, R.From}))
    complete(R, Reply());
}

void Session::start(const Request &R, bool FromIntake) {
  switch (R.H.Type) {
  case MsgType::Alloc:
    return doAlloc(R);
  case MsgType::Free:
    return doFree(R);
  case MsgType::Submit:
    return doSubmit(R, false);
  case MsgType::Retrieve:
    return doRetrieve(R);
  case MsgType::Batch:
    return doBatch(R, FromIntake);
  case MsgType::LoadImage:
    return doLoad(R);
  case MsgType::Run:
    return doRun(R, FromIntake);
  case MsgType::ExchangeOut:
    return doExchange(R);
  default:
    return fail(R, kErrInvalid,
                format("unexpected %s request", typeName(R.H.Type)));
  }
}

void Session::doAlloc(const Request &R) {
  Alloc A;
  Reader Rd(R.Body.data(), R.Body.size());
  if (!decodeBody(Rd, A).ok())
    return fail(R, kErrInvalid, "malformed Alloc");
  auto P = Memory.allocate(A.Size);
  if (!P)
    return fail(R, kErrNoMemory, P.status().message());
  Reply Rep;
  Rep.Value = *P;
  complete(R, Rep);
}

void Session::doFree(const Request &R) {
  Free F;
  Reader Rd(R.Body.data(), R.Body.size());
  if (!decodeBody(Rd, F).ok())
    return fail(R, kErrInvalid, "malformed Free");
  if (Status S = Memory.release(F.Ptr); !S.ok())
    return fail(R, kErrNotFound, S.message());
  complete(R, Reply());
}

void Session::doSubmit(const Request &R, bool FromPeer) {
  uint64_t Dst = 0, Size = 0;
  Reader Rd(R.Body.data(), R.Body.size());
  if (FromPeer) {
    PeerSubmit P;
    if (!decodeBody(Rd, P).ok())
      return fail(R, kErrInvalid, "malformed PeerSubmit");
    if (P.Token != Opts.Token)
      return fail(R, kErrNotFound, "wrong session token in PeerSubmit");
    Dst = P.DstPtr;
    Size = P.Size;
  } else {
    Transfer T;
    if (!decodeBody(Rd, T).ok())
      return fail(R, kErrInvalid, "malformed Submit");
    Dst = T.DevicePtr;
    Size = T.Size;
  }
  if (R.Data.Length != Size)
    return fail(R, kErrInvalid,
                format("submit of %lu bytes carries %zu bytes of data",
                       (unsigned long)Size, R.Data.Length));
  if (Status S = Memory.check(Dst, Size); !S.ok())
    return fail(R, kErrInvalid, "submit rejected: " + S.message());
  if (Size == 0)
    return complete(R, Reply());
  Request Copy = R;
  Copy.Data = BulkData(); // consumed by receive()
  W->receive(R.Data, reinterpret_cast<void *>(Dst),
             [this, Copy](const Status &S) {
               Reply Rep;
               if (!S.ok()) {
                 Rep.Code = kErrInternal;
                 Rep.Message = S.message();
               }
               complete(Copy, Rep);
             });
}

Reply Session::vetBatch(uint16_t Kernel, const BatchView &B, size_t DataLen) {
  Reply Why;
  auto Reject = [&Why](int32_t Code, std::string Message) {
    Why.Code = Code;
    Why.Message = std::move(Message);
    return Why;
  };
  if (Kernel && !kernelOf(Kernel))
    return Reject(
        kErrNotFound,
        format("kernel handle %u is not a kernel of a loaded image", Kernel));
  if (B.inBytes() != DataLen)
    return Reject(kErrInvalid,
                  format("batch of %lu bytes of submits carries %zu bytes",
                         (unsigned long)B.inBytes(), DataLen));
  if (B.outBytes() > kMaxBatchOut)
    return Reject(kErrInvalid,
                  format("batch asks for %lu bytes back, at most %lu",
                         (unsigned long)B.outBytes(),
                         (unsigned long)kMaxBatchOut));
  for (size_t K = 0; K < B.numIn(); ++K)
    if (Status S = Memory.check(B.in(K).DevicePtr, B.in(K).Size); !S.ok())
      return Reject(kErrInvalid, "submit rejected: " + S.message());
  for (size_t K = 0; K < B.numOut(); ++K)
    if (Status S = Memory.check(B.out(K).DevicePtr, B.out(K).Size); !S.ok())
      return Reject(kErrInvalid, "retrieve rejected: " + S.message());
  return Why;
}

namespace {
/// A Batch's out pieces, read in place.
struct OutPieces {
  const BatchView &B;
  size_t size() const { return B.numOut(); }
  Piece operator[](size_t K) const { return B.out(K); }
};

/// Copy a Batch's in bytes (back to back at Src) to their device ranges.
void scatterIn(const BatchView &B, const uint8_t *Src) {
  for (size_t K = 0; K < B.numIn(); ++K) {
    Piece P = B.in(K);
    std::memcpy(reinterpret_cast<void *>(P.DevicePtr), Src, P.Size);
    Src += P.Size;
  }
}
} // namespace

void Session::doBatch(const Request &R, bool FromIntake) {
  BatchView B;
  Reader Rd(R.Body.data(), R.Body.size());
  if (!decodeBody(Rd, B).ok())
    return fail(R, kErrInvalid, "malformed Batch");
  if (Reply Why = vetBatch(R.H.Operand, B, R.Data.Length); Why.Code != kOk)
    return fail(R, Why.Code, Why.Message);
  if (!R.Data.Rendezvous) {
    // Eager bytes: scatter straight from UCX's buffer.
    if (Data(R)) {
      scatterIn(B, static_cast<const uint8_t *>(R.Data.Desc));
      W->release(R.Data);
    }
    return runBatch(R.H, R.From, B, FromIntake);
  }
  auto Staging = std::make_shared<std::vector<uint8_t>>(R.Data.Length);
  Request Copy = R;
  Copy.Data = BulkData(); // consumed by receive()
  W->receive(R.Data, Staging->data(), [this, Copy, Staging](const Status &S) {
    if (!S.ok())
      return fail(Copy, kErrInternal, "batch transfer failed: " + S.message());
    BatchView B;
    Reader Rd(Copy.Body.data(), Copy.Body.size());
    decodeBody(Rd, B); // decoded before: cannot fail
    // Checked again: memory may have been freed while the bytes travelled.
    if (Reply Why = vetBatch(Copy.H.Operand, B, Staging->size());
        Why.Code != kOk)
      return fail(Copy, Why.Code, Why.Message);
    scatterIn(B, Staging->data());
    runBatch(Copy.H, Copy.From, B, /*FromIntake=*/false);
  });
}

void Session::runBatch(const Header &H, Peer From, const BatchView &B,
                       bool FromIntake) {
  KernelInfo *Kernel = kernelOf(H.Operand);
  if (!Kernel)
    return answerWith(H, From, OutPieces{B});
  if (H.Queue)
    markLanded(H.Queue, H.Seq + 1); // its bytes are in place
  KernelJob Job;
  Job.Kernel = Kernel;
  Job.Args.resize(B.numArgs());
  for (size_t K = 0; K < Job.Args.size(); ++K)
    Job.Args[K] = B.arg(K);
  Job.Request = H;
  Job.From = From;
  Job.Out.resize(B.numOut());
  for (size_t K = 0; K < Job.Out.size(); ++K)
    Job.Out[K] = B.out(K);
  // As in doRun: a short kernel that arrives in its turn runs at once.
  if (FromIntake && runsInline(*Job.Kernel))
    return runInline(Job);
  ReadyKernels.push(std::move(Job));
}

template <typename PieceList>
void Session::answerWith(const Header &H, Peer From, const PieceList &Out) {
  if (Out.size() == 0)
    return complete(H, From, Reply());
  // Checked again: another queue may have freed a range while a long kernel
  // ran.
  uint64_t Total = 0;
  for (size_t K = 0; K < Out.size(); ++K) {
    Piece P = Out[K];
    if (Status S = Memory.check(P.DevicePtr, P.Size); !S.ok()) {
      Reply Rep;
      Rep.Code = kErrInvalid;
      Rep.Message = "retrieve rejected: " + S.message();
      return complete(H, From, Rep);
    }
    Total += P.Size;
  }
  if (!GatherBuf || GatherBuf.use_count() > 1)
    GatherBuf = std::make_shared<std::vector<uint8_t>>();
  GatherBuf->resize(Total);
  uint8_t *Dst = GatherBuf->data();
  for (size_t K = 0; K < Out.size(); ++K) {
    Piece P = Out[K];
    std::memcpy(Dst, reinterpret_cast<const void *>(P.DevicePtr), P.Size);
    Dst += P.Size;
  }
  Reply Rep;
  Rep.Value = Total;
  complete(H, From, Rep, GatherBuf->data(), Total, GatherBuf);
}

void Session::doRetrieve(const Request &R) {
  Transfer T;
  Reader Rd(R.Body.data(), R.Body.size());
  if (!decodeBody(Rd, T).ok())
    return fail(R, kErrInvalid, "malformed Retrieve");
  if (Status S = Memory.check(T.DevicePtr, T.Size); !S.ok())
    return fail(R, kErrInvalid, "retrieve rejected: " + S.message());
  Reply Rep;
  Rep.Value = T.Size;
  // The bytes leave straight from device memory (zero copy); the queue moves
  // on only when UCX is done reading them.
  complete(R, Rep, reinterpret_cast<const void *>(T.DevicePtr), T.Size);
}

void Session::doLoad(const Request &R) {
  LoadImage L;
  Reader Rd(R.Body.data(), R.Body.size());
  if (!decodeBody(Rd, L).ok())
    return fail(R, kErrInvalid, "malformed LoadImage");
  if (L.Size != R.Data.Length || L.Size == 0 || L.Size > kMaxImageSize)
    return fail(R, kErrLoad,
                format("image size %lu does not match its data (%zu bytes)",
                       (unsigned long)L.Size, R.Data.Length));
  auto Buf = std::make_shared<std::vector<uint8_t>>(L.Size);
  Request Copy = R;
  Copy.Data = BulkData(); // consumed by receive(): never release it again
  W->receive(R.Data, Buf->data(), [this, Copy, Buf](const Status &S) {
    if (!S.ok())
      return fail(Copy, kErrLoad, "image transfer failed: " + S.message());
    auto Img = LoadedImage::load(Buf->data(), Buf->size());
    if (!Img)
      return fail(Copy, kErrLoad, Img.status().message());
    std::vector<EntryInfo> Entries = (*Img)->entries();
    size_t NewKernels = 0;
    for (const EntryInfo &E : Entries)
      NewKernels += E.Size == 0;
    if (Kernels.size() + NewKernels > kMaxKernels)
      return fail(Copy, kErrLoad,
                  format("too many kernels: %zu loaded, this image has %zu "
                         "more, a session holds at most %zu",
                         Kernels.size(), NewKernels, kMaxKernels));
    for (EntryInfo &E : Entries) {
      if (E.Size == 0) {
        Kernels.push_back({E.Addr, E.Name, {}});
        E.Kernel = static_cast<uint16_t>(Kernels.size());
      } else {
        Memory.adopt(E.Addr, E.Size);
      }
    }
    auto Encoded =
        std::make_shared<std::vector<uint8_t>>(encodeEntries(Entries));
    Reply Rep;
    Rep.Value = (*Img)->entries().size();
    OMPDPU_DEBUG_LOG("loaded image of %zu bytes with %zu entries", Buf->size(),
                     (*Img)->entries().size());
    Images.push_back(std::move(*Img));
    complete(Copy, Rep, Encoded->data(), Encoded->size(), Encoded);
  });
}

void Session::doRun(const Request &R, bool FromIntake) {
  Run Msg;
  Reader Rd(R.Body.data(), R.Body.size());
  if (!decodeBody(Rd, Msg).ok())
    return fail(R, kErrInvalid, "malformed Run");
  KernelInfo *Kernel = kernelOf(R.H.Operand);
  if (!Kernel)
    return fail(R, kErrNotFound,
                format("kernel handle %u is not a kernel of a loaded image",
                       R.H.Operand));
  KernelJob Job;
  Job.Kernel = Kernel;
  Job.Args = std::move(Msg.Args);
  Job.Request = R.H;
  Job.From = R.From;
  // A short kernel that arrives in its turn runs at once, without a trip
  // through the ready queue and the loop. Not when a finished operation
  // started it (pump): a queue of waiting kernels would then run as a
  // chain of nested calls.
  if (FromIntake && runsInline(*Job.Kernel))
    return runInline(Job);
  ReadyKernels.push(std::move(Job));
}

void Session::kernelDone(const KernelJob &Job, bool OnLoopThread) {
  // The reply needs the header, the sender and the out pieces, not the
  // body.
  if (OnLoopThread)
    answerWith(Job.Request, Job.From, Job.Out);
  else
    runOnLoop([this, H = Job.Request, From = Job.From, Out = Job.Out] {
      answerWith(H, From, Out);
    });
}

void Session::doExchange(const Request &R) {
  ExchangeOut X;
  Reader Rd(R.Body.data(), R.Body.size());
  if (!decodeBody(Rd, X).ok())
    return fail(R, kErrInvalid, "malformed ExchangeOut");
  if (Status S = Memory.check(X.SrcPtr, X.Size); !S.ok())
    return fail(R, kErrInvalid, "exchange rejected: " + S.message());
  Request Copy = R;
  Status S =
      Peers->copy(X, [this, Copy](const Reply &Rep) { complete(Copy, Rep); });
  if (!S.ok())
    return fail(R, kErrPeer, S.message());
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
  if (Capture)
    Capture->setWake([this] { W->signal(); });
  W->setHandler([this](const uint8_t *C, size_t L, const BulkData &D, Peer F) {
    return onMessage(C, L, D, F);
  });
  W->setPeerErrorHandler(
      [this](Peer P, const Status &S) { onPeerError(P, S); });

  // Tell the supervisor where to find us.
  SessionReady Ready;
  Ready.Address = W->address();
  Header RH;
  RH.Type = MsgType::SessionReady;
  if (Status S = sendChannelFrame(Opts.ControlFd, frame(RH, Ready)); !S.ok()) {
    log(LogLevel::Error, "session: %s", S.message().c_str());
    return 1;
  }

  {
    std::lock_guard<std::mutex> F(FollowM);
    LeaderActive = true;
  }
  threadMain(/*Original=*/true);
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

bool Session::runNow(const Header &H, Peer From, const uint8_t *Body,
                     size_t Len) {
  KernelInfo *K = kernelOf(H.Operand);
  if (!K || !runsInline(*K) || Len % 8 || Len / 8 > kRunNowArgs ||
      !inTurnNow(H, From))
    return false;
  uint64_t Args[kRunNowArgs];
  std::memcpy(Args, Body, Len);
  callShort(*K, Args, Len / 8);
  complete(H, From, Reply());
  return true;
}

bool Session::batchNow(const Header &H, Peer From, const uint8_t *Body,
                       size_t Len, const BulkData &Data) {
  KernelInfo *K = H.Operand ? kernelOf(H.Operand) : nullptr;
  if ((H.Operand && (!K || !runsInline(*K))) || Data.Rendezvous ||
      !inTurnNow(H, From))
    return false;
  BatchView B;
  Reader Rd(Body, Len);
  if (!decodeBody(Rd, B).ok() || B.numArgs() > kRunNowArgs ||
      vetBatch(H.Operand, B, Data.Length).Code != kOk)
    return false;
  if (Data.Length)
    scatterIn(B, static_cast<const uint8_t *>(Data.Desc));
  if (K) {
    uint64_t Args[kRunNowArgs];
    for (size_t I = 0; I < B.numArgs(); ++I)
      Args[I] = B.arg(I);
    callShort(*K, Args, B.numArgs());
  }
  answerWith(H, From, OutPieces{B});
  return true;
}

void Session::runInline(KernelJob &Job) {
  callShort(*Job.Kernel, Job.Args.data(), Job.Args.size());
  kernelDone(Job, true);
}

void Session::callShort(KernelInfo &K, const uint64_t *Args, size_t Count) {
  // Time only every 8th run: two clock reads are a noticeable share of a
  // short kernel's round trip, and a kernel that turns long is still
  // noticed soon.
  bool Timed = (++K.Timing.Calls & 7) == 0;
  OutputCapture::setLoopThread(true);
  double Micros = runKernel(K, Args, Count, Timed);
  OutputCapture::setLoopThread(false);
  if (Timed)
    K.Timing.add(Micros);
}

double Session::runKernel(KernelInfo &K, const uint64_t *Args, size_t Count,
                          bool Timed) {
  std::chrono::steady_clock::time_point T0;
  if (Timed)
    T0 = std::chrono::steady_clock::now();
  setCurrentKernel(K.Name.c_str());
  callKernel(K.Entry, Args, Count);
  setCurrentKernel(nullptr);
  if (Capture)
    Capture->afterKernel();
  if (!Timed)
    return 0;
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now() - T0)
      .count();
}

void Session::threadMain(bool Original) {
  bool Leader = Original;
  for (;;) {
    if (Leader)
      lead();
    std::unique_lock<std::mutex> F(FollowM);
    ++IdleFollowers;
    FollowCV.wait(F,
                  [&] { return Stopping || (LeaderWanted && !LeaderActive); });
    --IdleFollowers;
    if (Stopping)
      break;
    LeaderWanted = false;
    LeaderActive = true;
    Leader = true;
  }
  if (!Original)
    return;
  std::vector<std::thread> All;
  {
    std::lock_guard<std::mutex> F(FollowM);
    All.swap(Threads);
  }
  for (std::thread &T : All)
    T.join();
}

void Session::lead() {
  using Clock = std::chrono::steady_clock;
  auto LastActivity = Clock::now();
  unsigned Idle = 0;
  const auto Spin =
      std::chrono::microseconds(static_cast<long>(Opts.SpinMicros));
  for (;;) {
    if (stopRequested()) {
      std::lock_guard<std::mutex> F(FollowM);
      Stopping = true;
      LeaderActive = false;
      FollowCV.notify_all();
      return;
    }
    unsigned N = progress();
    if (Capture && Capture->pending())
      sendOutput(ClientPeers.first());
    while (!Incoming.empty()) {
      dispatch(Incoming.pop());
      ++N;
    }
    std::vector<std::function<void()>> Done;
    if (HaveDone.load(std::memory_order_acquire)) {
      std::lock_guard<std::mutex> L(DoneM);
      Done.swap(DoneQueue);
      HaveDone.store(false, std::memory_order_relaxed);
    }
    for (auto &Fn : Done)
      Fn();
    N += Done.size();
    if (!ReadyKernels.empty()) {
      KernelJob Job = ReadyKernels.pop();
      KernelTiming &Timing = Job.Kernel->Timing;
      // Others hand the loop to a follower first, so the session keeps
      // serving.
      if (runsInline(*Job.Kernel)) {
        runInline(Job);
        Idle = 0; // activity: the spin window starts again at the next poll
        continue;
      }
      {
        std::lock_guard<std::mutex> F(FollowM);
        LeaderActive = false;
        LeaderWanted = true;
        if (IdleFollowers == 0 && Threads.size() + 1 < kMaxThreads)
          Threads.emplace_back([this] { threadMain(false); });
        FollowCV.notify_one();
      }
      double Micros = runKernel(*Job.Kernel, Job.Args.data(), Job.Args.size(),
                                /*Timed=*/true);
      std::unique_lock<std::mutex> F(FollowM);
      if (LeaderActive || Stopping) {
        F.unlock();
        // Another thread leads now: it records the timing and replies.
        runOnLoop([&Timing, Micros] { Timing.add(Micros); });
        kernelDone(Job, false);
        return; // become a follower
      }
      // Nobody took over while the kernel ran: keep leading.
      LeaderWanted = false;
      LeaderActive = true;
      F.unlock();
      Timing.add(Micros);
      kernelDone(Job, true);
      Idle = 0;
      continue;
    }
    if (N) {
      Idle = 0;
      continue;
    }
    // Read the clock only now and then while spinning, and let other
    // threads on this core (kernels of other sessions, the host program of
    // an emulated DPU) run between polls.
    if (Idle++ == 0)
      LastActivity = Clock::now();
    if (Opts.IdleHook && (Idle & 7) == 1)
      Opts.IdleHook();
    // A yield is a system call (about 0.2 us here): paid on every poll it
    // would delay the answer to a message that arrives meanwhile. Every 64
    // polls (a few microseconds) lets other threads in promptly enough;
    // on cores shared with other busy processes, every poll.
    if (Opts.SharedCores || (Idle & 63) == 0)
      sched_yield();
    if ((Idle & 31) || Clock::now() - LastActivity < Spin)
      continue;
    Idle = 0;
    // With an idle hook (MPI progress) sleep briefly, so that MPI transfers
    // that kernels posted keep moving between kernels.
    W->wait(Opts.IdleHook ? 10 : 100);
    if (Opts.IdleHook)
      Opts.IdleHook();
  }
}

} // namespace

int runSessionInProcess(const SessionOptions &Opts) {
  Session S(Opts);
  return S.run();
}

int runSession(const SessionOptions &Opts) {
  installCrashReporter(Opts.ControlFd);
  if (Opts.OutputFd >= 0)
    OutputCapture::install(Opts.OutputFd);
  Session S(Opts);
  int Rc = S.run();
  if (OutputCapture *C = OutputCapture::active())
    C->stop();
  // Kernels may still run on executor threads (the client left without
  // waiting): do not wait for them.
  std::fflush(stderr);
  _exit(Rc);
}

} // namespace ompdpu::server
