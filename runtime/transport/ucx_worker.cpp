//===- ucx_worker.cpp - Worker implemented with UCP active messages ------===//
#include "transport/pending_sockets.h"
#include "transport/transport.h"
#include "transport/transport_list.h"

#include "common/log.h"
#include "protocol/messages.h"

#include <ucp/api/ucp.h>
#include <ucs/config/global_opts.h>

#include <arpa/inet.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <netdb.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

namespace ompdpu::transport {

class UcxWorker;

namespace {
/// Frames up to this size without bulk data are sent as the message's data
/// (kAmIdFrame). Well under UCX's eager limit: such a frame never arrives by
/// rendezvous.
constexpr size_t kSmallFrame = 256;

/// UCX's async thread watches at most ASYNC_MAX_EVENTS descriptors (1024),
/// and each connection its listener accepts takes one until the client
/// sends its request: past that, 1.13 fails them and crashes cleaning up.
/// Let it watch every descriptor this process may open (before the thread
/// starts with the first worker). A user's UCX_ASYNC_MAX_EVENTS wins.
void watchEveryDescriptor() {
  struct rlimit R;
  if (std::getenv("UCX_ASYNC_MAX_EVENTS") ||
      getrlimit(RLIMIT_NOFILE, &R) != 0 || R.rlim_cur <= 1024)
    return;
  rlim_t Events = R.rlim_cur == RLIM_INFINITY ? 1u << 20 : R.rlim_cur;
  ucs_global_opts_set_value("ASYNC_MAX_EVENTS", std::to_string(Events).c_str());
}

ErrorCode codeOf(ucs_status_t S) {
  switch (S) {
  case UCS_ERR_UNREACHABLE:
    return ErrorCode::Unreachable;
  case UCS_ERR_CONNECTION_RESET:
  case UCS_ERR_ENDPOINT_TIMEOUT:
    return ErrorCode::PeerLost;
  case UCS_ERR_NOT_CONNECTED:
    return ErrorCode::NotConnected;
  default:
    return ErrorCode::Generic;
  }
}

Status ucsError(const char *What, ucs_status_t S) {
  return Status::error(codeOf(S), format("%s: %s", What, ucs_status_string(S)));
}

/// An operation in flight: what to call when it ends, and the header bytes
/// UCX reads until then.
struct Operation {
  std::vector<uint8_t> Ctrl;
  Completion Done;
  UcxWorker *Owner = nullptr;
};

Expected<sockaddr_storage> resolve(const SockAddress &A, socklen_t &Len) {
  addrinfo Hints{};
  Hints.ai_family = AF_UNSPEC;
  Hints.ai_socktype = SOCK_STREAM;
  Hints.ai_flags = A.Host.empty() ? AI_PASSIVE : 0;
  addrinfo *Res = nullptr;
  std::string Port = std::to_string(A.Port);
  int Rc = getaddrinfo(A.Host.empty() ? nullptr : A.Host.c_str(), Port.c_str(),
                       &Hints, &Res);
  if (Rc != 0 || !Res)
    return Status::error(
        format("cannot resolve '%s': %s", A.Host.c_str(), gai_strerror(Rc)));
  sockaddr_storage SS{};
  std::memcpy(&SS, Res->ai_addr, Res->ai_addrlen);
  Len = Res->ai_addrlen;
  freeaddrinfo(Res);
  return SS;
}

/// Why binding a TCP socket to Addr fails (0: it does not): UCX reports a
/// failed listen only as a generic status ("Device is busy").
int bindError(const sockaddr_storage &Addr, socklen_t Len) {
  int Fd = socket(Addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (Fd < 0)
    return errno;
  int On = 1;
  setsockopt(Fd, SOL_SOCKET, SO_REUSEADDR, &On, sizeof On);
  int Err =
      bind(Fd, reinterpret_cast<const sockaddr *>(&Addr), Len) == 0 ? 0 : errno;
  close(Fd);
  return Err;
}
} // namespace

struct UcxWorkerState {
  ucp_context_h Ctx = nullptr;
  ucp_worker_h W = nullptr;
  ucp_listener_h Listener = nullptr;
  int EventFd = -1;
  std::deque<ucp_conn_request_h> ConnRequests;
  std::function<void(Peer)> OnAccept;
  PendingLimits Limits;
  std::unique_ptr<PendingSockets> Pending; // once listening
  std::chrono::steady_clock::time_point NextSweep, NextReport;
  PendingDrops Unreported;
  std::vector<void *> Closing; // ucp_ep_close_nbx requests still running
  /// Finished operations, kept for reuse (with their buffers' capacity):
  /// most sends finish at once, and this keeps them from allocating.
  std::vector<std::unique_ptr<Operation>> SpareOps;
};

/// The UCX implementation: one context and worker, with the active-message
/// handlers installed. Following UCX's ucp_client_server.c, listener
/// callbacks only queue the connection request; endpoints are created from
/// the progress loop.
class UcxWorker final : public Worker {
public:
  UcxWorker() : I(std::make_unique<UcxWorkerState>()) {}
  static Expected<std::unique_ptr<Worker>>
  create(const std::string &Transports, bool SenderCopies, bool ReuseAddress);
  ~UcxWorker() override;
  void limitPending(const PendingLimits &L) override { I->Limits = L; }
  Expected<uint16_t> listen(const SockAddress &Addr,
                            std::function<void(Peer)> OnAccept) override;
  Expected<Peer> connect(const SockAddress &Addr) override;
  Expected<Peer> connectToWorker(const std::vector<uint8_t> &Address,
                                 bool DetectPeerFailure) override;
  std::vector<uint8_t> address() const override;
  void closePeer(Peer P) override;
  std::string describe(Peer P) const override;
  bool trySend(Peer To, const void *Ctrl, size_t CtrlLen, const void *Data,
               size_t Len, bool NeedsAnswer) override;
  void send(Peer To, const std::vector<uint8_t> &Ctrl, const void *Data,
            size_t Len, Completion Done, bool NeedsAnswer) override;
  void receive(const BulkData &Data, void *Dst, Completion Done) override;
  void release(const BulkData &Data) override;
  unsigned progress() override;
  void wait(int TimeoutMs) override;
  void signal() override;
  bool arm() override;
  int eventFd() const override;

private:
  std::unique_ptr<UcxWorkerState> I;
  friend struct WorkerCallbacks;
};

/// Static trampolines from UCX's C callbacks into the Worker.
struct WorkerCallbacks {
  /// The sender's endpoint, when it asked for an answer.
  static Peer senderOf(const ucp_am_recv_param_t *Param) {
    return (Param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP)
               ? Param->reply_ep
               : nullptr;
  }
  static Operation *start(UcxWorker *Owner, Completion Done) {
    std::unique_ptr<Operation> Op;
    auto &Spare = Owner->I->SpareOps;
    if (Spare.empty()) {
      Op = std::make_unique<Operation>();
    } else {
      Op = std::move(Spare.back());
      Spare.pop_back();
    }
    Op->Done = std::move(Done);
    Op->Owner = Owner;
    ++Owner->Pending;
    return Op.release();
  }
  static void finish(Operation *Op, const Status &S) {
    UcxWorker *Owner = Op->Owner;
    --Owner->Pending;
    Completion Done = std::move(Op->Done);
    Op->Done = nullptr;
    auto &Spare = Owner->I->SpareOps;
    if (Spare.size() < 64)
      Spare.emplace_back(Op);
    else
      delete Op;
    if (Done)
      Done(S);
  }
  /// UCX's answer to a non-blocking call: done at once (null), failed (an
  /// error pointer), or in flight (a request whose callback finishes Op).
  static void settle(Operation *Op, ucs_status_ptr_t R, const char *What) {
    if (R == nullptr)
      finish(Op, Status());
    else if (UCS_PTR_IS_ERR(R))
      finish(Op, ucsError(What, UCS_PTR_STATUS(R)));
  }
  static ucs_status_t onMessage(void *Arg, const void *Header, size_t HLen,
                                void *Data, size_t Len,
                                const ucp_am_recv_param_t *Param) {
    auto *Self = static_cast<UcxWorker *>(Arg);
    BulkData B;
    if (Len) {
      B.Desc = Data;
      B.Length = Len;
      B.Rendezvous = Param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV;
      B.Persistent = Param->recv_attr & UCP_AM_RECV_ATTR_FLAG_DATA;
    }
    Peer From = senderOf(Param);
    bool Keep = false;
    if (Self->Handler)
      Keep = Self->Handler(static_cast<const uint8_t *>(Header), HLen, B, From);
    if (Keep && (B.Rendezvous || B.Persistent))
      return UCS_INPROGRESS;
    return UCS_OK;
  }
  /// A small frame alone, as the message's data (see trySend); valid only
  /// during the call.
  static ucs_status_t onFrame(void *Arg, const void *, size_t, void *Data,
                              size_t Len, const ucp_am_recv_param_t *Param) {
    auto *Self = static_cast<UcxWorker *>(Arg);
    if (Param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) {
      // Not what a peer sends here: drop it, releasing UCX's descriptor.
      ucp_am_data_release(Self->I->W, Data);
      return UCS_OK;
    }
    Peer From = senderOf(Param);
    if (Self->Handler)
      Self->Handler(static_cast<const uint8_t *>(Data), Len, BulkData(), From);
    return UCS_OK;
  }
  static void onSend(void *Req, ucs_status_t S, void *User) {
    auto *Op = static_cast<Operation *>(User);
    WorkerCallbacks::finish(Op, S == UCS_OK ? Status()
                                            : ucsError("send failed", S));
    ucp_request_free(Req);
  }
  static void onRecv(void *Req, ucs_status_t S, size_t, void *User) {
    auto *Op = static_cast<Operation *>(User);
    WorkerCallbacks::finish(Op, S == UCS_OK ? Status()
                                            : ucsError("receive failed", S));
    ucp_request_free(Req);
  }
  static void onPeerError(void *Arg, ucp_ep_h Ep, ucs_status_t S) {
    auto *Self = static_cast<UcxWorker *>(Arg);
    if (Self->OnPeerError)
      Self->OnPeerError(Ep, Status::error(codeOf(S), ucs_status_string(S)));
  }
  static void onConnRequest(ucp_conn_request_h Req, void *Arg) {
    static_cast<UcxWorkerState *>(Arg)->ConnRequests.push_back(Req);
  }
};

Expected<std::unique_ptr<Worker>>
UcxWorker::create(const std::string &Transports, bool SenderCopies,
                  bool ReuseAddress) {
  static const bool Watching = (watchEveryDescriptor(), true);
  (void)Watching;
  auto Self = std::make_unique<UcxWorker>();
  UcxWorkerState &I = *Self->I;

  ucp_config_t *Config = nullptr;
  ucs_status_t S = ucp_config_read(nullptr, nullptr, &Config);
  if (S != UCS_OK)
    return ucsError("cannot read UCX configuration", S);
  // Without error handling on its shared-memory transports (posix and
  // sysv, both "MM") UCX prefers TCP for endpoints that detect peer failure.
  // Set in this context's configuration, not in the environment: the host
  // program's environment stays as it was (no setenv racing a getenv in
  // another thread). Only when the transports in force may load them: UCX
  // reports a setting for a transport it did not load on the program's
  // stdout. A user's own setting wins.
  const char *UserList = std::getenv("UCX_TLS");
  if (mayUseSharedMemory(UserList ? UserList : Transports) &&
      !std::getenv("UCX_MM_ERROR_HANDLING") &&
      !std::getenv("UCX_POSIX_ERROR_HANDLING") &&
      !std::getenv("UCX_SYSV_ERROR_HANDLING"))
    ucp_config_modify(Config, "MM_ERROR_HANDLING", "y");
  // An explicit UCX_TLS from the user always wins.
  if (!Transports.empty() && !UserList)
    ucp_config_modify(Config, "TLS", Transports.c_str());
  if (SenderCopies && !std::getenv("UCX_RNDV_SCHEME"))
    ucp_config_modify(Config, "RNDV_SCHEME", "put_zcopy");
  // Linux binds over TIME-WAIT connections only when they, too, came from a
  // socket with SO_REUSEADDR: every server sets it, so the next may listen.
  if (ReuseAddress && !std::getenv("UCX_CM_REUSEADDR") &&
      !std::getenv("UCX_TCP_CM_REUSEADDR") &&
      !std::getenv("UCX_RDMA_CM_REUSEADDR"))
    ucp_config_modify(Config, "CM_REUSEADDR", "y");
  ucp_params_t P{};
  P.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_NAME;
  P.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
  P.name = "ompdpu";
  S = ucp_init(&P, Config, &I.Ctx);
  ucp_config_release(Config);
  if (S != UCS_OK)
    return ucsError("cannot initialise UCX", S);

  ucp_worker_params_t WP{};
  WP.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  WP.thread_mode = UCS_THREAD_MODE_SERIALIZED;
  S = ucp_worker_create(I.Ctx, &WP, &I.W);
  if (S != UCS_OK)
    return ucsError("cannot create UCX worker", S);
  S = ucp_worker_get_efd(I.W, &I.EventFd);
  if (S != UCS_OK)
    return ucsError("cannot get UCX event fd", S);

  // Frames with bulk data: the data may be kept past the callback (eager
  // data until the loop lands it, rendezvous data until it is received).
  // Small frames alone: nothing is kept, so UCX hands over the bytes where
  // they arrived instead of copying each message into a descriptor of its
  // own (an allocation, a copy and a cache miss per message).
  auto Install = [&](unsigned Id, ucp_am_recv_callback_t Cb, uint32_t Flags) {
    ucp_am_handler_param_t HP{};
    HP.field_mask =
        UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
        UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
    HP.id = Id;
    HP.cb = Cb;
    HP.arg = Self.get();
    HP.flags = Flags;
    return ucp_worker_set_am_recv_handler(I.W, &HP);
  };
  S = Install(protocol::kAmId, WorkerCallbacks::onMessage,
              UCP_AM_FLAG_WHOLE_MSG | UCP_AM_FLAG_PERSISTENT_DATA);
  if (S == UCS_OK)
    S = Install(protocol::kAmIdFrame, WorkerCallbacks::onFrame,
                UCP_AM_FLAG_WHOLE_MSG);
  if (S != UCS_OK)
    return ucsError("cannot install active-message handler", S);
  return std::unique_ptr<Worker>(std::move(Self));
}

Expected<std::unique_ptr<Worker>> Worker::create(const std::string &Transports,
                                                 bool SenderCopies) {
  return UcxWorker::create(Transports, SenderCopies, /*ReuseAddress=*/false);
}

Expected<std::unique_ptr<Worker>> Worker::createListening() {
  return UcxWorker::create("", /*SenderCopies=*/false, /*ReuseAddress=*/true);
}

UcxWorker::~UcxWorker() {
  if (!I)
    return;
  // Pending requests are refused while their listener still exists.
  if (I->Listener) {
    for (ucp_conn_request_h R : I->ConnRequests)
      ucp_listener_reject(I->Listener, R);
    ucp_listener_destroy(I->Listener);
  }
  // Give forced closes a bounded time to finish.
  for (int Spin = 0; Spin < 100000 && !I->Closing.empty(); ++Spin)
    progress();
  if (I->W)
    ucp_worker_destroy(I->W);
  if (I->Ctx)
    ucp_cleanup(I->Ctx);
}

Expected<uint16_t> UcxWorker::listen(const SockAddress &Addr,
                                     std::function<void(Peer)> OnAccept) {
  socklen_t Len = 0;
  auto SS = resolve(Addr, Len);
  if (!SS)
    return SS.status();
  I->OnAccept = std::move(OnAccept);
  ucp_listener_params_t LP{};
  LP.field_mask = UCP_LISTENER_PARAM_FIELD_SOCK_ADDR |
                  UCP_LISTENER_PARAM_FIELD_CONN_HANDLER;
  LP.sockaddr.addr = reinterpret_cast<const sockaddr *>(&*SS);
  LP.sockaddr.addrlen = Len;
  LP.conn_handler.cb = WorkerCallbacks::onConnRequest;
  LP.conn_handler.arg = I.get();
  ucs_status_t S = ucp_listener_create(I->W, &LP, &I->Listener);
  if (S != UCS_OK) {
    std::string What =
        format("cannot listen on %s:%u", Addr.Host.c_str(), Addr.Port);
    if (int Err = bindError(*SS, Len))
      return Status::error(codeOf(S), What + ": " + std::strerror(Err));
    return ucsError(What.c_str(), S);
  }
  ucp_listener_attr_t A{};
  A.field_mask = UCP_LISTENER_ATTR_FIELD_SOCKADDR;
  S = ucp_listener_query(I->Listener, &A);
  if (S != UCS_OK)
    return ucsError("cannot query listener", S);
  uint16_t Port = portOf(A.sockaddr);
  I->Pending = std::make_unique<PendingSockets>(Port, I->Limits);
  return Port;
}

/// Sweep the connections that sent no request yet, four times a second;
/// say what was dropped at most every 10 s, in one line.
static void sweepPending(UcxWorkerState &I) {
  if (!I.Pending) // clients and sessions: no clock read in their progress
    return;
  auto Now = std::chrono::steady_clock::now();
  if (Now < I.NextSweep)
    return;
  I.NextSweep = Now + std::chrono::milliseconds(250);
  PendingDrops D = I.Pending->sweep(Now);
  I.Unreported.Late += D.Late;
  I.Unreported.OverSource += D.OverSource;
  I.Unreported.OverTotal += D.OverTotal;
  if (!D.Source.empty())
    I.Unreported.Source = D.Source;
  if (!I.Unreported.total() || Now < I.NextReport)
    return;
  I.NextReport = Now + std::chrono::seconds(10);
  const PendingDrops &U = I.Unreported;
  log(LogLevel::Warning,
      "closed %zu connections that sent no connection request: %zu after "
      "%.0f s, %zu over %zu from one address%s%s, %zu over %zu in all",
      U.total(), U.Late, I.Limits.Timeout.count() / 1000.0, U.OverSource,
      I.Limits.PerSource, U.Source.empty() ? "" : " (",
      U.Source.empty() ? "" : (U.Source + ")").c_str(), U.OverTotal,
      I.Limits.Total);
  I.Unreported = PendingDrops();
}

static void fillErrorHandling(ucp_ep_params_t &EP, UcxWorker *Self,
                              bool DetectPeerFailure = true) {
  EP.field_mask |=
      UCP_EP_PARAM_FIELD_ERR_HANDLER | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
  EP.err_mode = DetectPeerFailure ? UCP_ERR_HANDLING_MODE_PEER
                                  : UCP_ERR_HANDLING_MODE_NONE;
  EP.err_handler.cb = WorkerCallbacks::onPeerError;
  EP.err_handler.arg = Self;
}

Expected<Peer> UcxWorker::connect(const SockAddress &Addr) {
  socklen_t Len = 0;
  auto SS = resolve(Addr, Len);
  if (!SS)
    return SS.status();
  ucp_ep_params_t EP{};
  EP.field_mask = UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR;
  EP.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
  EP.sockaddr.addr = reinterpret_cast<const sockaddr *>(&*SS);
  EP.sockaddr.addrlen = Len;
  fillErrorHandling(EP, this);
  ucp_ep_h Ep = nullptr;
  ucs_status_t S = ucp_ep_create(I->W, &EP, &Ep);
  if (S != UCS_OK)
    return ucsError("cannot create endpoint", S);
  return Peer(Ep);
}

Expected<Peer> UcxWorker::connectToWorker(const std::vector<uint8_t> &Address,
                                          bool DetectPeerFailure) {
  if (Address.empty())
    return Status::error("empty worker address");
  ucp_ep_params_t EP{};
  EP.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
  EP.address = reinterpret_cast<const ucp_address_t *>(Address.data());
  fillErrorHandling(EP, this, DetectPeerFailure);
  ucp_ep_h Ep = nullptr;
  ucs_status_t S = ucp_ep_create(I->W, &EP, &Ep);
  if (S != UCS_OK)
    return ucsError("cannot connect to worker address", S);
  return Peer(Ep);
}

std::vector<uint8_t> UcxWorker::address() const {
  ucp_address_t *A = nullptr;
  size_t Len = 0;
  if (ucp_worker_get_address(I->W, &A, &Len) != UCS_OK)
    return {};
  std::vector<uint8_t> Out(reinterpret_cast<uint8_t *>(A),
                           reinterpret_cast<uint8_t *>(A) + Len);
  ucp_worker_release_address(I->W, A);
  return Out;
}

std::string UcxWorker::describe(Peer P) const {
  char *Buf = nullptr;
  size_t Len = 0;
  FILE *F = open_memstream(&Buf, &Len);
  if (!F)
    return "";
  ucp_ep_print_info(static_cast<ucp_ep_h>(P), F);
  std::fclose(F);
  std::string Out(Buf, Len);
  std::free(Buf);
  return Out;
}

void UcxWorker::closePeer(Peer P) {
  if (!P)
    return;
  ucp_request_param_t RP{};
  RP.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  RP.flags = UCP_EP_CLOSE_FLAG_FORCE;
  ucs_status_ptr_t R = ucp_ep_close_nbx(static_cast<ucp_ep_h>(P), &RP);
  if (UCS_PTR_IS_PTR(R))
    I->Closing.push_back(R);
}

bool UcxWorker::trySend(Peer To, const void *Ctrl, size_t CtrlLen,
                        const void *Data, size_t Len, bool NeedsAnswer) {
  // A small frame without bulk data travels as the message's data, not as
  // its header, under its own id (kAmIdFrame, received without a copy):
  // UCX carries a header-less message faster on shared memory.
  bool FrameAsData = Len == 0 && CtrlLen <= kSmallFrame;
  ucp_request_param_t RP{};
  RP.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL;
  RP.flags = NeedsAnswer ? UCP_AM_SEND_FLAG_REPLY : 0;
  ucs_status_ptr_t R =
      FrameAsData
          ? ucp_am_send_nbx(static_cast<ucp_ep_h>(To), protocol::kAmIdFrame,
                            nullptr, 0, Ctrl, CtrlLen, &RP)
          : ucp_am_send_nbx(static_cast<ucp_ep_h>(To), protocol::kAmId, Ctrl,
                            CtrlLen, Data, Len, &RP);
  if (UCS_PTR_IS_PTR(R)) {
    ucp_request_free(R); // not expected with FORCE_IMM_CMPL; UCX finishes it
    return true;
  }
  return R == nullptr;
}

void UcxWorker::send(Peer To, const std::vector<uint8_t> &Ctrl,
                     const void *Data, size_t Len, Completion Done,
                     bool NeedsAnswer) {
  Operation *Op = WorkerCallbacks::start(this, std::move(Done));
  Op->Ctrl.assign(Ctrl.begin(), Ctrl.end()); // UCX may read it until Done
  ucp_request_param_t RP{};
  RP.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                    UCP_OP_ATTR_FIELD_FLAGS;
  RP.flags = NeedsAnswer ? UCP_AM_SEND_FLAG_REPLY : 0;
  RP.cb.send = WorkerCallbacks::onSend;
  RP.user_data = Op;
  ucs_status_ptr_t R =
      ucp_am_send_nbx(static_cast<ucp_ep_h>(To), protocol::kAmId,
                      Op->Ctrl.data(), Op->Ctrl.size(), Data, Len, &RP);
  WorkerCallbacks::settle(Op, R, "send failed");
}

void UcxWorker::receive(const BulkData &Data, void *Dst, Completion Done) {
  if (!Data.Rendezvous) {
    if (Data.Length)
      std::memcpy(Dst, Data.Desc, Data.Length);
    if (Data.Persistent)
      ucp_am_data_release(I->W, Data.Desc);
    if (Done)
      Done(Status());
    return;
  }
  Operation *Op = WorkerCallbacks::start(this, std::move(Done));
  ucp_request_param_t RP{};
  RP.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  RP.cb.recv_am = WorkerCallbacks::onRecv;
  RP.user_data = Op;
  ucs_status_ptr_t R =
      ucp_am_recv_data_nbx(I->W, Data.Desc, Dst, Data.Length, &RP);
  WorkerCallbacks::settle(Op, R, "receive failed");
}

void UcxWorker::release(const BulkData &Data) {
  if (Data.Desc && (Data.Rendezvous || Data.Persistent))
    ucp_am_data_release(I->W, Data.Desc);
}

unsigned UcxWorker::progress() {
  unsigned N = ucp_worker_progress(I->W);
  while (!I->ConnRequests.empty()) {
    ucp_conn_request_h Req = I->ConnRequests.front();
    I->ConnRequests.pop_front();
    ucp_conn_request_attr_t RA{};
    RA.field_mask = UCP_CONN_REQUEST_ATTR_FIELD_CLIENT_ADDR;
    if (I->Pending && ucp_conn_request_query(Req, &RA) == UCS_OK)
      I->Pending->requested(RA.client_address);
    ucp_ep_params_t EP{};
    EP.field_mask = UCP_EP_PARAM_FIELD_CONN_REQUEST;
    EP.conn_request = Req;
    fillErrorHandling(EP, this);
    ucp_ep_h Ep = nullptr;
    if (ucp_ep_create(I->W, &EP, &Ep) == UCS_OK && I->OnAccept)
      I->OnAccept(Ep);
    ++N;
  }
  sweepPending(*I);
  for (size_t K = 0; K < I->Closing.size();) {
    if (ucp_request_check_status(I->Closing[K]) != UCS_INPROGRESS) {
      ucp_request_free(I->Closing[K]);
      I->Closing[K] = I->Closing.back();
      I->Closing.pop_back();
    } else {
      ++K;
    }
  }
  return N;
}

void UcxWorker::wait(int TimeoutMs) {
  ucs_status_t S = ucp_worker_arm(I->W);
  if (S == UCS_ERR_BUSY)
    return; // events are pending: progress now
  pollfd P{I->EventFd, POLLIN, 0};
  poll(&P, 1, TimeoutMs);
}

void UcxWorker::signal() { ucp_worker_signal(I->W); }

bool UcxWorker::arm() { return ucp_worker_arm(I->W) != UCS_ERR_BUSY; }

int UcxWorker::eventFd() const { return I->EventFd; }

} // namespace ompdpu::transport
