//===- emulate_command.cpp - `ompdpu emulate` for other tools -------------===//
#include "tools/emulate_command.h"

#include "common/log.h"
#include "tools/emulator.h"
#include "tools/mpi_emulator.h"
#include "tools/run_key.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ompdpu::tools {
namespace {

volatile sig_atomic_t StopRequested = 0;
void onStop(int) { StopRequested = 1; }

std::string jsonList(const std::vector<std::string> &Items) {
  std::string S;
  for (const std::string &I : Items)
    S += (S.empty() ? "" : ",") + I;
  return "[" + S + "]";
}

std::string jsonCores(const std::vector<int> &Cores) {
  return "[" + joinCores(Cores) + "]";
}

/// Where the DPUs are and the plan, as one line of JSON (see the README).
std::string describe(const std::vector<std::string> &Addresses,
                     const std::vector<pid_t> &Pids, const CorePlan &Plan,
                     const std::string &Key) {
  std::string KeyText;
  for (char C : Key)
    KeyText +=
        (C == '"' || C == '\\') ? std::string("\\") + C : std::string(1, C);
  std::vector<std::string> Addrs, PidTexts, Dpus;
  for (const std::string &A : Addresses)
    Addrs.push_back("\"" + A + "\"");
  for (pid_t P : Pids)
    PidTexts.push_back(std::to_string(P));
  for (const std::vector<int> &C : Plan.DpuCores)
    Dpus.push_back(jsonCores(C));
  return "{\"devices\":" + jsonList(Addrs) +
         ",\"server_pids\":" + jsonList(PidTexts) +
         ",\"host_cores\":" + jsonCores(Plan.HostCores) +
         ",\"dpu_cores\":" + jsonList(Dpus) +
         ",\"shared\":" + (Plan.Fits ? "false" : "true") + ",\"key\":\"" +
         KeyText + "\"}";
}

/// True when stdin is a pipe or socket: its end then means "stop" (the
/// caller is gone), while a terminal or /dev/null never says so.
bool stdinSaysStop() {
  struct stat St;
  return fstat(0, &St) == 0 && (S_ISFIFO(St.st_mode) || S_ISSOCK(St.st_mode));
}

/// Wait for a stop signal or the end of stdin (-1), or for one of Pids to
/// end: its index, its wait status in WStatus.
int waitForEnd(const std::vector<pid_t> &Pids, int &WStatus) {
  bool WatchStdin = stdinSaysStop();
  while (!StopRequested) {
    pollfd P{WatchStdin ? 0 : -1, POLLIN, 0};
    if (poll(&P, 1, 200) > 0 && (P.revents & (POLLIN | POLLHUP))) {
      char Buf[256];
      if (read(0, Buf, sizeof(Buf)) <= 0)
        return -1;
    }
    for (size_t K = 0; K < Pids.size(); ++K)
      if (waitpid(Pids[K], &WStatus, WNOHANG) == Pids[K])
        return static_cast<int>(K);
  }
  return -1;
}

void announce(const std::vector<std::string> &Addresses,
              const std::vector<pid_t> &Pids, const CorePlan &Plan,
              const std::string &Key) {
  std::printf("%s\n", describe(Addresses, Pids, Plan, Key).c_str());
  std::fflush(stdout);
}

int serveSeparately(const std::string &ServerExe, const EmulatorOptions &O) {
  CorePlan Plan;
  auto S = startEmulatedServers(ServerExe, O, Plan);
  if (!S) {
    log(LogLevel::Error, "%s", S.status().message().c_str());
    return 127;
  }
  std::vector<std::string> Addresses;
  std::vector<pid_t> Pids;
  for (const EmulatedServer &Srv : *S) {
    Addresses.push_back(Srv.Address);
    Pids.push_back(Srv.Pid);
  }
  announce(Addresses, Pids, Plan, O.KeyFile);
  int WStatus = 0;
  int Dead = waitForEnd(Pids, WStatus);
  if (Dead >= 0) {
    log(LogLevel::Error, "emulated DPU %d (pid %d) %s", Dead, Pids[Dead],
        describeExit(WStatus).c_str());
    (*S)[Dead].Pid = -1;
  }
  stopServers(*S);
  return Dead >= 0 ? 1 : 0;
}

int serveAsMpiJob(const std::string &ServerExe, const EmulatorOptions &O,
                  const std::vector<std::string> &Mpirun) {
  CorePlan Plan;
  auto J = startMpiServers(ServerExe, O, Mpirun, Plan);
  if (!J) {
    log(LogLevel::Error, "%s", J.status().message().c_str());
    return 127;
  }
  announce(J->Addresses, {J->Pid}, Plan, O.KeyFile);
  int WStatus = 0;
  if (waitForEnd({J->Pid}, WStatus) >= 0) {
    log(LogLevel::Error, "the MPI job of emulated DPUs (pid %d) %s", J->Pid,
        describeExit(WStatus).c_str());
    killpg(J->Pid, SIGKILL); // ranks mpirun left behind
    return 1;
  }
  stopMpiJob(*J);
  return 0;
}

} // namespace

int cmdEmulate(int Argc, char **Argv, const std::string &ServerExe) {
  EmulatorOptions EO;
  EO.Count = 0;
  EO.QuietStdout = true; // stdout carries the description alone
  bool Mpi = false;
  std::vector<std::string> Mpirun;
  for (int K = 0; K < Argc; ++K) {
    std::string A = Argv[K];
    if (A == "--mpi") {
      Mpi = true;
      continue;
    }
    if (A == "--") {
      Mpirun.assign(Argv + K + 1, Argv + Argc);
      break;
    }
    int Taken = takeEmulatorOption(Argc, Argv, K, EO);
    if (Taken < 0)
      return 2;
    if (Taken)
      continue;
    if (Argv[K][0] == '-') {
      log(LogLevel::Error, "emulate: unknown option '%s'", Argv[K]);
      return 2;
    }
    if (EO.Count) {
      log(LogLevel::Error, "emulate takes one count, not '%s' as well",
          Argv[K]);
      return 2;
    }
    EO.Count = countFrom("emulate", Argv[K], 1, 64);
    if (EO.Count < 0)
      return 2;
  }
  if (!EO.Count) {
    log(LogLevel::Error, "emulate needs a count of DPUs");
    return 2;
  }
  if (Mpi != !Mpirun.empty()) {
    log(LogLevel::Error, "--mpi needs the MPI launcher after '--' (e.g. -- "
                         "mpirun --oversubscribe), and only --mpi takes one");
    return 2;
  }
  setenv("UCX_LOG_FILE", "stderr", 0);
  struct sigaction SA {};
  SA.sa_handler = onStop;
  for (int Sig : {SIGINT, SIGTERM, SIGHUP})
    sigaction(Sig, &SA, nullptr);
  signal(SIGPIPE, SIG_IGN);
  auto Key = RunKey::create();
  if (!Key) {
    log(LogLevel::Error, "%s", Key.status().message().c_str());
    return 127;
  }
  EO.KeyFile = (*Key)->path();
  return Mpi ? serveAsMpiJob(ServerExe, EO, Mpirun)
             : serveSeparately(ServerExe, EO);
}

} // namespace ompdpu::tools
