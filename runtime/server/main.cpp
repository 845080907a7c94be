//===- main.cpp - ompdpu-server: the DPU side of ompdpu -------------------===//
//
// Without --session this is the supervisor: it listens for clients and
// starts one session process (this same program, with --session) for each.
//
//===----------------------------------------------------------------------===//
#include "common/log.h"
#include "protocol/session_channel.h"
#include "server/descriptor_limit.h"
#include "server/options.h"
#include "server/readiness.h"
#include "server/session.h"
#include "server/supervisor.h"

#include <climits>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#ifdef OMPDPU_HAVE_MPI
#include <mpi.h>
#endif

using namespace ompdpu;
using namespace ompdpu::server;

#ifdef OMPDPU_HAVE_MPI
/// Drive MPI's progress engine: a probe makes Open MPI advance the sends and
/// receives that kernels posted, while no kernel runs.
static void progressMpi() {
  int Flag = 0;
  MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &Flag,
             MPI_STATUS_IGNORE);
}
#endif

int main(int Argc, char **Argv) {
  setLogPrefix("ompdpu-server");
  for (int K = 1; K < Argc; ++K)
    if (!std::strcmp(Argv[K], "--help") || !std::strcmp(Argv[K], "-h")) {
      std::fputs(serverUsage(), stdout);
      return 0;
    }
  auto Opts = parseServerOptions(Argc, Argv);
  if (!Opts) {
    log(LogLevel::Error, "%s", Opts.status().message().c_str());
    std::fputs(serverUsage(), stderr);
    return 2;
  }
  for (int Fd : {Opts->ReadyFd, Opts->ControlFd})
    if (Fd >= 0 && fcntl(Fd, F_GETFD) < 0) {
      log(LogLevel::Error, "fd %d (--ready-fd or --control-fd) is not open",
          Fd);
      return 2;
    }
  if (Opts->Session) {
    // A session must not outlive its supervisor.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1)
      return 1;
    protocol::SessionSetup Setup;
    if (Status St = protocol::receiveChannelMessage(
            Opts->ControlFd, protocol::MsgType::SessionSetup, Setup,
            /*TimeoutMs=*/10000);
        !St.ok()) {
      log(LogLevel::Error, "session: %s", St.message().c_str());
      return 1;
    }
    SessionOptions S;
    S.ControlFd = Opts->ControlFd;
    S.OutputFd = Setup.OutputFd;
    S.Token = Setup.Token;
    S.MemoryLimit = Setup.MemoryLimit;
    S.Cores = Setup.Cores;
    S.SpinMicros = Setup.SpinMicros;
    S.SharedCores = Setup.SharedCores;
    S.SameHost = Setup.SameHost;
    S.Transports = Setup.Transports;
    if (S.Cores && !std::getenv("OMP_NUM_THREADS"))
      setenv("OMP_NUM_THREADS", std::to_string(S.Cores).c_str(), 1);
    setLogPrefix("ompdpu-server[session]");
    return runSession(S);
  }
  raiseDescriptorLimit();
  if (Opts->Mpi) {
#ifdef OMPDPU_HAVE_MPI
    // Kernels on several executor threads may call MPI at once.
    int Provided = 0;
    MPI_Init_thread(&Argc, &Argv, MPI_THREAD_MULTIPLE, &Provided);
    if (Provided < MPI_THREAD_MULTIPLE)
      log(LogLevel::Warning,
          "MPI provides thread level %d, not "
          "MPI_THREAD_MULTIPLE: kernels must not call MPI concurrently",
          Provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &Opts->MpiRank);
    MPI_Comm_size(MPI_COMM_WORLD, &Opts->MpiSize);
    setLogPrefix(format("ompdpu-server[rank %d]", Opts->MpiRank));
    Opts->MpiProgress = progressMpi;
    int Rc = runSupervisor(*Opts, "");
    MPI_Finalize();
    return Rc;
#else
    log(LogLevel::Error, "--mpi: this server was built without MPI");
    return 2;
#endif
  }
  char Self[PATH_MAX];
  ssize_t N = readlink("/proc/self/exe", Self, sizeof(Self) - 1);
  if (N <= 0) {
    log(LogLevel::Error, "cannot find my own executable");
    return 1;
  }
  Self[N] = 0;
  Opts->OnListening = notifyReady;
  return runSupervisor(*Opts, Self);
}
