//===- supervisor.cpp - Accept clients, start and watch sessions ----------===//
#include "server/supervisor.h"

#include "common/config.h"
#include "common/elf_image.h"
#include "common/log.h"
#include "protocol/messages.h"
#include "protocol/session_channel.h"
#include "server/authenticator.h"
#include "server/client_record.h"
#include "server/confinement.h"
#include "server/core_pinning.h"
#include "server/descriptor_limit.h"
#include "server/image_loader.h"
#include "server/intake.h"
#include "server/output_leftovers.h"
#include "server/session.h"
#include "server/session_launcher.h"
#include "server/session_log.h"
#include "server/session_reaper.h"
#include "server/stop_signals.h"
#include "transport/transport.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <map>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace ompdpu::server {

using namespace protocol;
using transport::BulkData;
using transport::Peer;

namespace {

class Supervisor {
public:
  Supervisor(const ServerOptions &O, Authenticator A, const char *Exe,
             unsigned Cores)
      : Opts(O), Auth(std::move(A)), In(Opts, Auth), SelfExe(Exe),
        Reaper(O.Verbose), Cores(Cores) {}
  int run();

private:
  bool onMessage(const uint8_t *Ctrl, size_t Len, const BulkData &D, Peer From);
  /// Start the session of an authenticated client and answer its handshake.
  void admit(const Admission &A);
  /// Why one more session of this account is too many ("": it is not).
  std::string overLimit(uid_t Uid) const;
  Status spawnSession(ClientRec &C, uint64_t Token, const SessionUser &User,
                      std::vector<uint8_t> &Addr);
  Status startInProcessSession(ClientRec &C, uint64_t Token,
                               std::vector<uint8_t> &Addr);
  void reapThreads();
  void reapChildren();
  void onSessionExit(pid_t Pid, int WStatus);
  void dropClient(Peer P, const char *Why);
  void reply(Peer To, const Header &Req, int32_t Code, const std::string &Msg);

  ServerOptions Opts;
  Authenticator Auth;
  Intake In; ///< connections until their client is admitted
  const char *SelfExe;
  std::unique_ptr<transport::Worker> W;
  std::map<Peer, ClientRec> Clients;
  std::map<pid_t, Peer> Sessions;
  SessionReaper Reaper;
  unsigned NextId = 1;
  unsigned Cores = 1;
  std::string SessionTransports; // UCX_TLS of the session being started
  bool SessionSameHost = false;  // its client is on this machine
};

void Supervisor::reply(Peer To, const Header &Req, int32_t Code,
                       const std::string &Msg) {
  Header H;
  H.Type = MsgType::Reply;
  H.RequestId = Req.RequestId;
  Reply R;
  R.Code = Code;
  R.Message = Msg;
  W->send(To, frame(H, R), nullptr, 0, nullptr);
}

bool Supervisor::onMessage(const uint8_t *Ctrl, size_t Len, const BulkData &,
                           Peer From) {
  Header H;
  Reader Body;
  Status S = parseFrame(Ctrl, Len, H, Body);
  if (!S.ok()) {
    log(LogLevel::Warning, "dropping malformed message: %s",
        S.message().c_str());
    if (From && H.Magic == kMagic)
      reply(From, H, kErrInvalid, "malformed message: " + S.message());
    return false;
  }
  switch (H.Type) {
  case MsgType::Hello:
    if (auto A = In.onHello(From, H, Body, Clients.count(From) != 0))
      admit(*A);
    break;
  case MsgType::AuthProof:
    if (auto A = In.onAuthProof(From, H, Body))
      admit(*A);
    break;
  case MsgType::Ping:
    reply(From, H, kOk, "");
    break;
  case MsgType::Bye:
    reply(From, H, kOk, "");
    if (auto It = Clients.find(From); It != Clients.end())
      It->second.Gone = true;
    break;
  default:
    reply(From, H, kErrInvalid,
          format("%s is not a supervisor request", typeName(H.Type)));
  }
  return false;
}

std::string Supervisor::overLimit(uid_t Uid) const {
  size_t Serving = 0, OfUser = 0;
  for (const auto &[P, Other] : Clients)
    if (Other.Pid > 0 || Other.Thread) {
      ++Serving;
      OfUser += Other.Uid == Uid;
    }
  if (Serving >= Opts.MaxSessions)
    return format("server busy: it serves %zu sessions, at most %u "
                  "(--max-sessions)",
                  Serving, Opts.MaxSessions);
  if (OfUser >= Opts.MaxSessionsPerUser)
    return format("this user holds %zu sessions, at most %u "
                  "(--max-sessions-per-user)",
                  OfUser, Opts.MaxSessionsPerUser);
  return "";
}

void Supervisor::admit(const Admission &A) {
  const Peer From = A.From;
  const Header &H = A.Request;
  const Hello &Hi = A.Hi;
  const Identity &Id = A.Id;
  auto User = sessionUserFor(Id, Opts.RootUser, Opts.RootSessions);
  if (!User)
    return In.refuse(From, H, Hi.ClientName, kErrAuth, User.status().message());
  if (std::string Why = overLimit(User->Uid); !Why.empty())
    return In.refuse(From, H, Hi.ClientName, kErrBusy, Why);
  In.forget(From);
  ClientRec &C = Clients[From];
  C.Ep = From;
  C.Id = NextId++;
  C.Uid = User->Uid;
  uint64_t Token = 0;
  if (getrandom(&Token, sizeof(Token), 0) != sizeof(Token))
    Token = static_cast<uint64_t>(
                std::chrono::steady_clock::now().time_since_epoch().count()) ^
            (static_cast<uint64_t>(getpid()) << 32);
  HelloReply Rep;
  // Client and server on one machine (an emulated DPU), the session under
  // the client's own account: shared memory is the only transport it needs
  // (UCX's segments are the owner's alone).
  bool OneMachine = !Hi.BootId.empty() && Hi.BootId == bootId();
  SessionSameHost = OneMachine && Hi.Uid == User->Uid;
  Rep.SameHost = SessionSameHost ? 1 : OneMachine ? 2 : 0;
  SessionTransports =
      transport::sessionTransports(SessionSameHost, Rep.SameHost == 2);
  Status S = spawnSession(C, Token, *User, Rep.SessionAddress);
  if (!S.ok()) {
    Clients.erase(From);
    log(LogLevel::Error, "client '%s': cannot start session: %s",
        Hi.ClientName.c_str(), S.message().c_str());
    return In.refuse(From, H, Hi.ClientName, kErrInternal,
                     "cannot start session: " + S.message());
  }
  Rep.Isa = isaName(nativeMachine());
  Rep.Cores = Cores;
  Rep.Memory = Opts.Memory;
  Rep.Token = Token;
  char Host[256] = {0};
  gethostname(Host, sizeof(Host) - 1);
  Rep.Hostname = Host;
  if (Opts.Verbose)
    log(LogLevel::Info,
        "client %u ('%s', authenticated by %s) connected: session pid %d "
        "as %s",
        C.Id, Hi.ClientName.c_str(), Id.Method.c_str(), C.Pid,
        User->Name.empty() ? std::to_string(User->Uid).c_str()
                           : User->Name.c_str());
  Header RH;
  RH.Type = MsgType::HelloReply;
  RH.RequestId = H.RequestId;
  W->send(From, frame(RH, Rep), nullptr, 0, nullptr);
}

Status Supervisor::spawnSession(ClientRec &C, uint64_t Token,
                                const SessionUser &User,
                                std::vector<uint8_t> &Addr) {
  if (Opts.Mpi && User.Switch)
    return Status::error("--mpi runs sessions in the server's own process, "
                         "which cannot change accounts: start it as the "
                         "user it serves, not as root");
  if (Opts.Mpi)
    return startInProcessSession(C, Token, Addr);
  SessionSetup Terms;
  Terms.Token = Token;
  Terms.MemoryLimit = Opts.Memory;
  Terms.Cores = Cores;
  Terms.SpinMicros = static_cast<uint32_t>(Opts.SpinMicros);
  Terms.SharedCores = Opts.SharedCores;
  Terms.Transports = SessionTransports;
  Terms.SameHost = SessionSameHost;
  SessionLimits Limits;
  Limits.AddressSpace =
      Opts.AddressSpace ? Opts.AddressSpace : Opts.Memory + (16ull << 30);
  Limits.OpenFiles = sessionDescriptorLimit(Opts.MaxOpenFiles);
  Limits.Processes = Opts.MaxProcesses;
  auto L = launchSession(SelfExe, Terms, User, Limits);
  if (!L)
    return L.status();
  C.Pid = L->Pid;
  C.CtlFd = L->ChannelFd;
  C.OutputFd = L->OutputFd;
  C.Log = SessionLog(L->LogFd, format("client %u's session (process %d)", C.Id,
                                      static_cast<int>(C.Pid)));
  Sessions[C.Pid] = C.Ep;
  Reaper.track(C.Pid, C.Uid, std::move(L->ShmFiles));
  Addr = std::move(L->Address);
  return Status();
}

Status Supervisor::startInProcessSession(ClientRec &C, uint64_t Token,
                                         std::vector<uint8_t> &Addr) {
  for (auto &[P, Other] : Clients)
    if (&Other != &C && Other.Thread)
      return Status::error(format("this server (MPI rank %d) is busy with "
                                  "another client",
                                  Opts.MpiRank));
  int Fds[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, Fds) != 0)
    return Status::error(format("socketpair: %s", std::strerror(errno)));
  C.CtlFd = Fds[0];
  C.StopFlag = std::make_unique<std::atomic<bool>>(false);
  C.Finished = std::make_unique<std::atomic<bool>>(false);
  SessionOptions SO;
  SO.ControlFd = Fds[1];
  SO.Token = Token;
  SO.MemoryLimit = Opts.Memory;
  SO.Cores = Cores;
  SO.SpinMicros = Opts.SpinMicros;
  SO.SharedCores = Opts.SharedCores;
  SO.Transports = SessionTransports;
  SO.IdleHook = Opts.MpiProgress;
  SO.ExternalStop = C.StopFlag.get();
  std::atomic<bool> *Finished = C.Finished.get();
  C.Thread = std::make_unique<std::thread>([SO, Finished, WFd = Fds[1], this] {
    runSessionInProcess(SO);
    close(WFd);
    Finished->store(true);
    W->signal();
  });
  auto Ready = awaitSessionReady(C.CtlFd);
  if (!Ready)
    return Ready.status();
  Addr = std::move(Ready->Address);
  return Status();
}

void Supervisor::onSessionExit(pid_t Pid, int WStatus) {
  auto SIt = Sessions.find(Pid);
  if (SIt == Sessions.end())
    return;
  Peer Ep = SIt->second;
  Sessions.erase(SIt);
  auto CIt = Clients.find(Ep);
  if (CIt == Clients.end())
    return;
  ClientRec &C = CIt->second;
  C.readControl();
  SessionExit X = C.exitReport(WStatus);
  close(C.CtlFd);
  C.CtlFd = -1;
  C.Pid = -1;
  C.Log.close();
  if (!C.Gone)
    for (const std::vector<uint8_t> &F : C.unsentOutput())
      W->send(C.Ep, F, nullptr, 0, nullptr);
  C.closeOutputArea();
  if (C.Gone)
    return; // orderly end
  if (X.Signal || X.ExitCode)
    log(LogLevel::Note, "client %u: %s", C.Id, X.Message.c_str());
  Header H;
  H.Type = MsgType::SessionExit;
  W->send(C.Ep, frame(H, X), nullptr, 0, nullptr);
}

void Supervisor::reapThreads() {
  for (auto &[P, C] : Clients)
    if (C.Thread && C.Finished->load()) {
      C.Thread->join();
      C.Thread.reset();
      if (C.CtlFd >= 0)
        close(C.CtlFd);
      C.CtlFd = -1;
      if (Opts.Verbose)
        log(LogLevel::Info, "client %u: session ended", C.Id);
    }
}

void Supervisor::reapChildren() {
  while (auto E = Reaper.next()) {
    if (!E->StopSignal) {
      onSessionExit(E->Pid, E->Status);
      continue;
    }
    // Its client would wait forever: this supervisor still answers for it.
    if (auto SIt = Sessions.find(E->Pid); SIt != Sessions.end())
      if (auto CIt = Clients.find(SIt->second); CIt != Clients.end())
        CIt->second.StoppedBy = E->StopSignal;
  }
}

void Supervisor::dropClient(Peer P, const char *Why) {
  In.forget(P);
  auto It = Clients.find(P);
  if (It == Clients.end()) {
    W->closePeer(P);
    return;
  }
  ClientRec &C = It->second;
  if (C.Pid > 0) {
    // A session must not outlive its client.
    killSessionGroup(C.Pid);
    Sessions.erase(C.Pid);
  }
  if (C.Thread) {
    C.StopFlag->store(true);
    C.Thread->join(); // the session sees the flag within 100 ms
  }
  if (C.CtlFd >= 0)
    close(C.CtlFd);
  C.closeOutputArea();
  if (Opts.Verbose)
    log(LogLevel::Info, "client %u %s", C.Id, Why);
  Clients.erase(It);
  W->closePeer(P);
}

int Supervisor::run() {
  auto Created = transport::Worker::createListening();
  if (!Created) {
    log(LogLevel::Error, "%s", Created.status().message().c_str());
    return 1;
  }
  W = std::move(*Created);
  In.setWorker(W.get());
  W->setHandler([this](const uint8_t *C, size_t L, const BulkData &D, Peer F) {
    return onMessage(C, L, D, F);
  });
  W->setPeerErrorHandler([this](Peer P, const Status &S) {
    dropClient(P, ("disconnected: " + S.message()).c_str());
  });
  auto Listen = parseHostPort(Opts.Listen, /*AllowPortZero=*/true);
  if (!Listen) {
    log(LogLevel::Error, "--listen: %s", Listen.status().message().c_str());
    return 2;
  }
  auto Addr = std::make_unique<transport::SockAddress>(
      transport::SockAddress{Listen->Host, Listen->Port});
  if (Opts.Mpi) {
    if (Addr->Port == 0) {
      log(LogLevel::Error, "--mpi needs a fixed base port in --listen");
      return 2;
    }
    Addr->Port = static_cast<uint16_t>(Addr->Port + Opts.MpiRank);
  }
  W->limitPending(
      {Opts.MaxStartups, Opts.MaxStartupsPerSource,
       std::chrono::milliseconds(
           static_cast<int64_t>(Opts.HandshakeTimeout * 1000))});
  auto Port = W->listen(*Addr, [this](Peer P) { In.accepted(P); });
  if (!Port) {
    log(LogLevel::Error, "%s", Port.status().message().c_str());
    return 1;
  }
  if (!installStopSignals())
    return 1;

  std::string Where = protocol::ReadyLine{Addr->Host, *Port}.address();
  if (Opts.Mpi)
    log(LogLevel::Note,
        "MPI rank %d of %d listening on %s (kernels run in "
        "this process)",
        Opts.MpiRank, Opts.MpiSize, Where.c_str());
  else if (Opts.Verbose || Opts.ReadyFd < 0)
    log(LogLevel::Note, "listening on %s (%s, %u core%s, %.1f GiB per client)",
        Where.c_str(), isaName(nativeMachine()), Cores, Cores == 1 ? "" : "s",
        Opts.Memory / double(1ull << 30));
  if (Opts.ReadyFd >= 0) {
    std::string Line = formatReadyLine({Addr->Host, *Port, getpid()});
    ssize_t Ignored = write(Opts.ReadyFd, Line.data(), Line.size());
    (void)Ignored;
    close(Opts.ReadyFd);
  }
  if (Opts.OnListening)
    Opts.OnListening(Where);

  while (!stopRequested()) {
    unsigned N = W->progress();
    reapChildren();
    reapThreads();
    for (auto &[P, C] : Clients) {
      C.readControl();
      C.Log.relay();
    }
    In.dropLate();
    if (N)
      continue;
    if (!W->arm())
      continue;
    pollfd Fds[2] = {{W->eventFd(), POLLIN, 0}, {signalFd(), POLLIN, 0}};
    poll(Fds, 2, In.waiting() ? 100 : 1000);
    drainSignals();
  }
  for (auto &[P, C] : Clients) {
    if (C.Thread) {
      C.StopFlag->store(true);
      C.Thread->join();
    }
  }
  // Kill every session process and wait for each, so that none is left
  // behind unreaped or with libomp's registration.
  Reaper.killAll();
  if (Opts.Verbose)
    log(LogLevel::Info, "stopped");
  return 0;
}

} // namespace

int runSupervisor(const ServerOptions &Opts, const char *SelfExe) {
  ServerOptions O = Opts;
  if (Status S = protectFromPeers(); !S.ok()) {
    log(LogLevel::Error, "%s", S.message().c_str());
    return 1;
  }
  auto Cores = pinToCores(O.Cores);
  if (!Cores) {
    log(LogLevel::Error, "%s", Cores.status().message().c_str());
    return 2;
  }
  if (O.Memory == 0) {
    long Pages = sysconf(_SC_PHYS_PAGES), PageSize = sysconf(_SC_PAGESIZE);
    O.Memory = static_cast<uint64_t>(Pages) * PageSize / 10 * 9;
  }
  auto Auth = Authenticator::create(O.Keys, O.Munge, O.MungeSocket, O.Insecure);
  if (!Auth) {
    log(LogLevel::Error, "%s", Auth.status().message().c_str());
    return 2;
  }
  if (O.Insecure)
    log(LogLevel::Warning,
        "INSECURE: --insecure serves every client that reaches %s without "
        "authentication; anyone who can connect runs code here as %s",
        O.Listen.c_str(), geteuid() == 0 ? O.RootUser.c_str() : "this user");
  else if (O.Verbose)
    log(LogLevel::Info, "clients authenticate with %s",
        Auth->describe().c_str());
  Supervisor S(O, std::move(*Auth), SelfExe, *Cores);
  return S.run();
}

} // namespace ompdpu::server
