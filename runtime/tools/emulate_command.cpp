//===- emulate_command.cpp - `ompdpu emulate`: servers for other tools ----===//
#include "tools/emulate_command.h"

#include "common/log.h"
#include "tools/emulator.h"

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

/// The plan and the servers as one line of JSON (documented in the README).
std::string describe(const std::vector<EmulatedServer> &Servers,
                     const CorePlan &Plan) {
  std::vector<std::string> Addrs, Pids, Dpus;
  for (const EmulatedServer &S : Servers) {
    Addrs.push_back("\"" + S.Address + "\"");
    Pids.push_back(std::to_string(S.Pid));
  }
  for (const std::vector<int> &C : Plan.DpuCores)
    Dpus.push_back(jsonCores(C));
  return "{\"devices\":" + jsonList(Addrs) +
         ",\"server_pids\":" + jsonList(Pids) +
         ",\"host_cores\":" + jsonCores(Plan.HostCores) +
         ",\"dpu_cores\":" + jsonList(Dpus) +
         ",\"shared\":" + (Plan.Fits ? "false" : "true") + "}";
}

/// A reaped server's end, in words.
std::string howItEnded(int WStatus) {
  if (WIFSIGNALED(WStatus))
    return format("killed by signal %d", WTERMSIG(WStatus));
  return format("exited with status %d", WEXITSTATUS(WStatus));
}

/// True when stdin is a pipe or socket: its end then means "stop" (the
/// caller is gone), while a terminal or /dev/null never says so.
bool stdinSaysStop() {
  struct stat St;
  return fstat(0, &St) == 0 && (S_ISFIFO(St.st_mode) || S_ISSOCK(St.st_mode));
}

/// Wait for a stop signal, the end of stdin or a server's death (1).
int waitForEnd(std::vector<EmulatedServer> &Servers) {
  bool WatchStdin = stdinSaysStop();
  while (!StopRequested) {
    pollfd P{WatchStdin ? 0 : -1, POLLIN, 0};
    if (poll(&P, 1, 200) > 0 && (P.revents & (POLLIN | POLLHUP))) {
      char Buf[256];
      if (read(0, Buf, sizeof(Buf)) <= 0)
        return 0;
    }
    for (size_t K = 0; K < Servers.size(); ++K) {
      int WStatus = 0;
      if (waitpid(Servers[K].Pid, &WStatus, WNOHANG) != Servers[K].Pid)
        continue;
      log(LogLevel::Error, "emulated DPU %zu (pid %d) %s", K, Servers[K].Pid,
          howItEnded(WStatus).c_str());
      Servers[K].Pid = -1;
      return 1;
    }
  }
  return 0;
}

} // namespace

int cmdEmulate(int Argc, char **Argv, const std::string &ServerExe) {
  EmulatorOptions EO;
  EO.Count = 0;
  EO.QuietStdout = true; // stdout carries the description alone
  for (int K = 0; K < Argc; ++K) {
    int Taken = takeEmulatorOption(Argc, Argv, K, EO);
    if (Taken < 0)
      return 2;
    if (Taken)
      continue;
    char *End = nullptr;
    long N = std::strtol(Argv[K], &End, 10);
    if (EO.Count || *End || N < 1 || N > 64) {
      log(LogLevel::Error, "emulate needs one count from 1 to 64, not '%s'",
          Argv[K]);
      return 2;
    }
    EO.Count = static_cast<int>(N);
  }
  if (!EO.Count) {
    log(LogLevel::Error, "emulate needs a count of DPUs");
    return 2;
  }
  setenv("UCX_LOG_FILE", "stderr", 0);
  struct sigaction SA {};
  SA.sa_handler = onStop;
  for (int Sig : {SIGINT, SIGTERM, SIGHUP})
    sigaction(Sig, &SA, nullptr);
  signal(SIGPIPE, SIG_IGN);

  CorePlan Plan;
  auto S = startEmulatedServers(ServerExe, EO, Plan);
  if (!S) {
    log(LogLevel::Error, "%s", S.status().message().c_str());
    return 127;
  }
  std::printf("%s\n", describe(*S, Plan).c_str());
  std::fflush(stdout);
  int Rc = waitForEnd(*S);
  stopServers(*S);
  return Rc;
}

} // namespace ompdpu::tools
