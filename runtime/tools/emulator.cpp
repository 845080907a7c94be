//===- emulator.cpp - Emulated DPU servers on loopback --------------------===//
#include "tools/emulator.h"

#include "common/log.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace ompdpu::tools {

static std::string joinCores(const std::vector<int> &Cores) {
  std::string S;
  for (int C : Cores)
    S += (S.empty() ? "" : ",") + std::to_string(C);
  return S;
}

static std::vector<int> allowedCores() {
  cpu_set_t Set;
  CPU_ZERO(&Set);
  sched_getaffinity(0, sizeof(Set), &Set);
  std::vector<int> Out;
  for (int C = 0; C < CPU_SETSIZE; ++C)
    if (CPU_ISSET(C, &Set))
      Out.push_back(C);
  return Out;
}

/// Split the cores: each DPU takes its share from the top, the host keeps the
/// rest (at least one core; with too few cores, shares overlap: returns
/// false then).
static bool planCores(const EmulatorOptions &O, std::vector<EmulatedServer> &S,
                      std::vector<int> &HostCores) {
  std::vector<int> All = allowedCores();
  int N = static_cast<int>(All.size());
  int Per = O.CoresPerDpu > 0 ? O.CoresPerDpu : std::max(1, N / (O.Count + 1));
  if (Per * O.Count >= N)
    log(LogLevel::Warning,
        "%d cores cannot give %d DPUs %d core(s) each and the host one: "
        "cores are shared",
        N, O.Count, Per);
  int Next = N - 1;
  for (EmulatedServer &Srv : S)
    for (int K = 0; K < Per; ++K) {
      Srv.Cores.push_back(All[((Next % N) + N) % N]);
      --Next;
    }
  HostCores.clear();
  for (int K = 0; K <= Next && K < N; ++K)
    HostCores.push_back(All[K]);
  if (HostCores.empty())
    HostCores.push_back(All[0]);
  return Per * O.Count < N;
}

Expected<std::vector<EmulatedServer>>
startEmulatedServers(const std::string &ServerExe, const EmulatorOptions &O,
                     std::vector<int> &HostCores) {
  std::vector<EmulatedServer> Servers(O.Count);
  // Servers busy-poll 1 ms after each request (as on a DPU). Those that
  // share cores with the host program or with each other yield the core
  // after every poll and sleep after 20 us, or their polling would keep the
  // others waiting (2 DPUs and the program on 2 cores: a 64 KiB copy from
  // DPU to DPU takes 70 us with a 1 ms spin, 11 us with 20 us).
  bool OwnCores = O.Pin && planCores(O, Servers, HostCores);
  for (size_t K = 0; K < Servers.size(); ++K) {
    EmulatedServer &S = Servers[K];
    int Fds[2];
    if (pipe2(Fds, O_CLOEXEC) != 0)
      return Status::error(format("pipe: %s", std::strerror(errno)));
    std::vector<std::string> Args = {ServerExe, "--listen", "127.0.0.1:0",
                                     "--ready-fd", "3"};
    if (!S.Cores.empty()) {
      Args.push_back("--cores");
      Args.push_back(joinCores(S.Cores));
    }
    if (!OwnCores)
      for (const char *A : {"--shared-cores", "--spin-us", "20"})
        Args.push_back(A);
    if (!O.Memory.empty()) {
      Args.push_back("--memory");
      Args.push_back(O.Memory);
    }
    if (O.Verbose)
      Args.push_back("--verbose");
    pid_t Pid = fork();
    if (Pid == 0) {
      dup2(Fds[1], 3);
      std::vector<char *> Argv;
      for (std::string &A : Args)
        Argv.push_back(A.data());
      Argv.push_back(nullptr);
      execv(ServerExe.c_str(), Argv.data());
      std::fprintf(stderr, "ompdpu error: cannot run %s: %s\n",
                   ServerExe.c_str(), std::strerror(errno));
      _exit(127);
    }
    close(Fds[1]);
    if (Pid < 0) {
      close(Fds[0]);
      stopServers(Servers);
      return Status::error(format("fork: %s", std::strerror(errno)));
    }
    S.Pid = Pid;
    std::string Line;
    auto Deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (Line.find('\n') == std::string::npos &&
           std::chrono::steady_clock::now() < Deadline) {
      pollfd P{Fds[0], POLLIN, 0};
      if (poll(&P, 1, 100) <= 0)
        continue;
      char Buf[256];
      ssize_t N = read(Fds[0], Buf, sizeof(Buf));
      if (N <= 0)
        break;
      Line.append(Buf, N);
    }
    close(Fds[0]);
    if (Line.rfind("LISTENING ", 0) != 0) {
      stopServers(Servers);
      return Status::error(
          format("emulated DPU %zu (%s) did not start", K, ServerExe.c_str()));
    }
    S.Address = Line.substr(10, Line.find('\n') - 10);
  }
  return Servers;
}

void stopServers(std::vector<EmulatedServer> &Servers) {
  for (EmulatedServer &S : Servers)
    if (S.Pid > 0)
      kill(S.Pid, SIGTERM);
  auto Deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  for (EmulatedServer &S : Servers) {
    while (S.Pid > 0) {
      pid_t R = waitpid(S.Pid, nullptr, WNOHANG);
      if (R == S.Pid || (R < 0 && errno == ECHILD)) {
        S.Pid = -1;
        break;
      }
      if (std::chrono::steady_clock::now() > Deadline) {
        kill(S.Pid, SIGKILL);
        waitpid(S.Pid, nullptr, 0);
        S.Pid = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
}

} // namespace ompdpu::tools
