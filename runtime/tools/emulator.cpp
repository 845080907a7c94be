//===- emulator.cpp - Emulated DPU servers on loopback --------------------===//
#include "tools/emulator.h"

#include "common/byte_size.h"

#include "common/log.h"
#include "protocol/session_channel.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace ompdpu::tools {

int countFrom(const char *Option, const char *V, int Lo, int Hi) {
  char *End = nullptr;
  errno = 0;
  long N = V ? std::strtol(V, &End, 10) : 0;
  if (!V || End == V || *End || errno || N < Lo || N > Hi) {
    log(LogLevel::Error, "%s needs a whole number from %d to %d%s%s%s", Option,
        Lo, Hi, V ? ", not '" : "", V ? V : "", V ? "'" : "");
    return -1;
  }
  return static_cast<int>(N);
}

int takeEmulatorOption(int Argc, char **Argv, int &K, EmulatorOptions &O) {
  std::string A = Argv[K];
  auto Value = [&]() -> const char * {
    return K + 1 < Argc ? Argv[++K] : nullptr;
  };
  if (A == "--pin") {
    O.Pin = true;
  } else if (A == "--verbose") {
    O.Verbose = true;
  } else if (A == "--cores-per-dpu") {
    O.CoresPerDpu = countFrom("--cores-per-dpu", Value(), 1, 4096);
    if (O.CoresPerDpu < 0)
      return -1;
  } else if (A == "--memory") {
    const char *V = Value();
    if (!V || !*V) {
      log(LogLevel::Error, "--memory needs a size");
      return -1;
    }
    if (auto Bytes = parseByteSize(V); !Bytes) {
      log(LogLevel::Error, "--memory: %s", Bytes.status().message().c_str());
      return -1;
    }
    O.Memory = V;
  } else {
    return 0;
  }
  return 1;
}

std::vector<std::string> authArgs(const EmulatorOptions &O) {
  std::vector<std::string> Args = {"--key", O.KeyFile};
  if (geteuid() == 0)
    Args.push_back("--root-sessions");
  return Args;
}

/// The server's command line for DPU K of the plan.
static std::vector<std::string> serverArgs(const std::string &ServerExe,
                                           const EmulatorOptions &O,
                                           const CorePlan &Plan, size_t K) {
  std::vector<std::string> Args = {ServerExe, "--listen", "127.0.0.1:0",
                                   "--ready-fd", "3"};
  if (!Plan.DpuCores[K].empty()) {
    Args.push_back("--cores");
    Args.push_back(joinCores(Plan.DpuCores[K]));
  }
  for (std::string &S : sharingOptions(Plan, K))
    Args.push_back(std::move(S));
  if (!O.Memory.empty()) {
    Args.push_back("--memory");
    Args.push_back(O.Memory);
  }
  if (O.Verbose)
    Args.push_back("--verbose");
  for (std::string &S : authArgs(O))
    Args.push_back(std::move(S));
  return Args;
}

/// The first line written to Fd within the deadline ("" if none).
static std::string readLine(int Fd, std::chrono::seconds Limit) {
  std::string Line;
  auto Deadline = std::chrono::steady_clock::now() + Limit;
  while (Line.find('\n') == std::string::npos &&
         std::chrono::steady_clock::now() < Deadline) {
    pollfd P{Fd, POLLIN, 0};
    if (poll(&P, 1, 100) <= 0)
      continue;
    char Buf[256];
    ssize_t N = read(Fd, Buf, sizeof(Buf));
    if (N <= 0)
      break;
    Line.append(Buf, N);
  }
  return Line;
}

pid_t spawn(std::vector<std::string> Args, const std::function<void()> &Setup) {
  pid_t Parent = getpid();
  pid_t Pid = fork();
  if (Pid == 0) {
    // Servers never outlive the command that started them, even one that
    // was killed with SIGKILL.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != Parent)
      _exit(1);
    Setup();
    std::vector<char *> Argv;
    for (std::string &A : Args)
      Argv.push_back(A.data());
    Argv.push_back(nullptr);
    execvp(Argv[0], Argv.data());
    std::fprintf(stderr, "ompdpu error: cannot run %s: %s\n", Argv[0],
                 std::strerror(errno));
    _exit(127);
  }
  return Pid;
}

/// Start one server; its address once it listens.
static Expected<EmulatedServer> startServer(std::vector<std::string> Args,
                                            bool QuietStdout) {
  int Fds[2];
  if (pipe2(Fds, O_CLOEXEC) != 0)
    return Status::error(format("pipe: %s", std::strerror(errno)));
  pid_t Pid = spawn(std::move(Args), [&] {
    dup2(Fds[1], 3);
    if (QuietStdout)
      dup2(2, 1);
  });
  close(Fds[1]);
  if (Pid < 0) {
    close(Fds[0]);
    return Status::error(format("fork: %s", std::strerror(errno)));
  }
  EmulatedServer S;
  S.Pid = Pid;
  std::string Line = readLine(Fds[0], std::chrono::seconds(15));
  close(Fds[0]);
  auto Ready = protocol::parseReadyLine(Line);
  if (!Ready) {
    std::vector<EmulatedServer> One = {S};
    stopServers(One);
    return Status::error("did not start");
  }
  S.Address = Ready->address();
  return S;
}

CorePlan planFor(const EmulatorOptions &O) {
  std::vector<int> All = allowedCores();
  if (!O.Pin) {
    if (O.CoresPerDpu)
      log(LogLevel::Warning, "--cores-per-dpu takes effect with --pin only");
    return unpinnedPlan(All, O.Count);
  }
  CorePlan Plan = planCores(All, O.Count, O.CoresPerDpu);
  if (O.CoresPerDpu > 0 &&
      Plan.DpuCores[0].size() < static_cast<size_t>(O.CoresPerDpu))
    log(LogLevel::Warning,
        "--cores-per-dpu %d: this machine gives each DPU %zu of its %zu cores",
        O.CoresPerDpu, Plan.DpuCores[0].size(), All.size());
  if (!Plan.Fits)
    log(LogLevel::Warning,
        "%zu cores cannot give %d DPUs cores of their own and the program "
        "one: the DPUs share cores %s",
        All.size(), O.Count, joinCores(Plan.DpuCores[0]).c_str());
  return Plan;
}

std::string describeExit(int WStatus) {
  if (WIFSIGNALED(WStatus))
    return format("killed by signal %d", WTERMSIG(WStatus));
  return format("exited with status %d", WEXITSTATUS(WStatus));
}

Expected<std::vector<EmulatedServer>>
startEmulatedServers(const std::string &ServerExe, const EmulatorOptions &O,
                     CorePlan &Plan) {
  Plan = planFor(O);
  std::vector<EmulatedServer> Servers;
  for (size_t K = 0; K < Plan.DpuCores.size(); ++K) {
    auto S = startServer(serverArgs(ServerExe, O, Plan, K), O.QuietStdout);
    if (!S) {
      stopServers(Servers);
      return Status::error(format("emulated DPU %zu (%s) %s", K,
                                  ServerExe.c_str(),
                                  S.status().message().c_str()));
    }
    Servers.push_back(*S);
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
