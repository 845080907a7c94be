//===- ompdpu.cpp - The ompdpu command-line front door --------------------===//
//
//   ompdpu run [--emulate N [--pin] [--cores-per-dpu K] [--memory SIZE]]
//              [--devices HOST:PORT,...] -- PROGRAM [ARGS...]
//   ompdpu emulate N [--pin] [--cores-per-dpu K] [--memory SIZE]
//                    [--mpi -- MPIRUN [ARGS...]]
//   ompdpu info [--devices HOST:PORT,...] [--cluster]
//   ompdpu testbed up|status|down|exec|mpirun|srun|sbatch|env ...
//
//===----------------------------------------------------------------------===//
#include "client/connection.h"
#include "common/config.h"
#include "common/log.h"
#include "tools/emulate_command.h"
#include "tools/emulator.h"
#include "tools/info_command.h"
#include "tools/key_command.h"
#include "tools/libomptarget_probe.h"
#include "tools/plugin_dirs.h"
#include "tools/run_key.h"

#include <climits>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <sched.h>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace ompdpu;
using namespace ompdpu::tools;

namespace {

const char *Usage =
    "usage: ompdpu run [options] -- PROGRAM [ARGS...]\n"
    "       ompdpu emulate N [--pin] [--cores-per-dpu K] [--memory SIZE]\n"
    "                        [--mpi -- MPIRUN [ARGS...]]\n"
    "       ompdpu info [--devices HOST:PORT,...] [--cluster]\n"
    "       ompdpu key create [--force] FILE\n"
    "       ompdpu vm start|stop|status|run|... (the arm64 VM testbed; "
    "see ompdpu vm --help)\n"
    "       ompdpu testbed up|status|down|exec|mpirun|srun|... (nodes with "
    "DPUs\n"
    "                      on this machine; see ompdpu testbed --help)\n"
    "       ompdpu version\n"
    "\n"
    "run: run PROGRAM with ompdpu's plugin, against DPU servers.\n"
    "  --emulate N         start N emulated DPUs (ompdpu-server on loopback)\n"
    "  --pin               give each emulated DPU its own cores, the program "
    "the rest\n"
    "  --cores-per-dpu K   cores per emulated DPU with --pin (default: an "
    "even share)\n"
    "  --memory SIZE       device memory per client of each emulated DPU\n"
    "  --devices LIST      use these servers (default: OMPDPU_DEVICES or the "
    "config file)\n"
    "  --verbose           servers log clients and sessions\n"
    "The program sees OMPDPU_DEVICES and, with --emulate, OMPDPU_SERVER_PIDS\n"
    "and OMPDPU_KEY (a key made for this run, which the servers require).\n"
    "Exit status: the program's (128+N if it died of signal N).\n"
    "\n"
    "emulate: start N emulated DPUs for other tools (the run options above),\n"
    "  print them as one JSON line: {\"devices\": [\"HOST:PORT\", ...],\n"
    "  \"server_pids\": [...], \"host_cores\": [...], \"dpu_cores\": [[...], "
    "...],\n"
    "  \"shared\": true|false, \"key\": \"FILE\"} (clients need "
    "OMPDPU_KEY=FILE),\n"
    "  and keep them until SIGTERM/SIGINT, the end "
    "of\n"
    "  stdin (a pipe) or a server's death (exit status 1).\n"
    "  --mpi -- MPIRUN...  the servers as one MPI job (ompdpu-server --mpi) "
    "under\n"
    "                      MPIRUN, on consecutive ports; server_pids: "
    "MPIRUN's\n"
    "\n"
    "info: connect to every device this process uses and report its "
    "state;\n"
    "  --cluster: every DPU of every node in the devices file's cluster "
    "map.\n";

std::string selfDir() {
  char Buf[PATH_MAX];
  ssize_t N = readlink("/proc/self/exe", Buf, sizeof(Buf) - 1);
  if (N <= 0)
    return ".";
  Buf[N] = 0;
  std::string S = Buf;
  return S.substr(0, S.rfind('/'));
}

std::string libOmpdpuDir() { return selfDir() + "/../lib/ompdpu"; }

/// The plugin directories for the libomptarget version of the command's
/// program, or of the library it is given (see probeCommand, plugin_dirs.cpp):
/// lib/ompdpu[/llvm<N>] and its emulated/ directory. OMPDPU_PLUGIN_DIR
/// overrides the choice.
Expected<std::string> pluginPath(char *const *Argv) {
  const char *Program = Argv[0];
  if (const char *Override = std::getenv("OMPDPU_PLUGIN_DIR");
      Override && *Override) {
    if (!holdsPlugin(Override))
      return Status::error(format(
          "OMPDPU_PLUGIN_DIR=%s holds no ompdpu plugin (libomptarget.rtl.*.so "
          "in it or in its emulated/ directory): target regions would not "
          "reach a DPU",
          Override));
    return std::string(Override) + "/emulated:" + Override;
  }
  LibomptargetProbe P = probeCommand(Argv, std::getenv("LD_LIBRARY_PATH"));
  OMPDPU_DEBUG_LOG("%s loads %s (%s): LLVM %d", Program,
                   P.Needed.empty() ? "no libomptarget" : P.Needed.c_str(),
                   P.Path.empty() ? "not found" : P.Path.c_str(), P.Major);
  if (P.Major && !layoutFor(P.Major))
    log(LogLevel::Warning,
        "%s loads libomptarget %d (%s), which ompdpu does not serve "
        "(`ompdpu info` lists the versions): target regions will not reach "
        "a DPU",
        Program, P.Major, P.Path.empty() ? P.Needed.c_str() : P.Path.c_str());
  std::string Path = pluginPathFor(libOmpdpuDir(), P.Major);
  if (P.Major == 19 &&
      access((libOmpdpuDir() + "/llvm19/libomptarget.so.19.1").c_str(), R_OK))
    log(LogLevel::Warning,
        "%s loads libomptarget 19, whose plugins are built in: %s/llvm19 "
        "has no libomptarget.so.19.1 with the dpu plugin (build it with "
        "llvm-patches/build-libomptarget-19.sh)",
        Program, libOmpdpuDir().c_str());
  return Path;
}

std::string serverExe() {
  if (const char *Override = std::getenv("OMPDPU_SERVER"))
    return Override;
  // A package installs the emulated DPUs' server privately, in lib/ompdpu.
  std::string Beside = selfDir() + "/ompdpu-server";
  if (access(Beside.c_str(), X_OK) == 0)
    return Beside;
  return selfDir() + "/../lib/ompdpu/ompdpu-server";
}

/// The signals that stop a run: forwarded to the program once it runs.
constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};
volatile sig_atomic_t ChildPid = 0;
volatile sig_atomic_t StopSignal = 0;
void forwardSignal(int Sig) {
  StopSignal = Sig;
  if (ChildPid > 0)
    kill(ChildPid, Sig);
}

/// From now on SIGINT, SIGTERM and SIGHUP go to the program once it runs;
/// before, they stop the run after the servers have started.
void catchStopSignals() {
  struct sigaction SA {};
  SA.sa_handler = forwardSignal;
  for (int Sig : kStopSignals)
    sigaction(Sig, &SA, nullptr);
}

int runProgram(char **Argv, const std::vector<int> &HostCores) {
  // Held until the child's pid is known, so none is lost in between: the
  // child takes the default actions back first.
  sigset_t Stops, Old;
  sigemptyset(&Stops);
  for (int Sig : kStopSignals)
    sigaddset(&Stops, Sig);
  sigprocmask(SIG_BLOCK, &Stops, &Old);
  pid_t Pid = fork();
  if (Pid < 0) {
    sigprocmask(SIG_SETMASK, &Old, nullptr);
    log(LogLevel::Error, "fork: %s", std::strerror(errno));
    return 127;
  }
  if (Pid == 0) {
    for (int Sig : kStopSignals)
      signal(Sig, SIG_DFL);
    sigprocmask(SIG_SETMASK, &Old, nullptr);
    if (!HostCores.empty()) {
      cpu_set_t Set;
      CPU_ZERO(&Set);
      for (int C : HostCores)
        CPU_SET(C, &Set);
      sched_setaffinity(0, sizeof(Set), &Set);
    }
    execvp(Argv[0], Argv);
    // As a shell: 127 when there is no such program, 126 when it cannot run.
    int Err = errno;
    struct stat St;
    bool Dir = stat(Argv[0], &St) == 0 && S_ISDIR(St.st_mode);
    log(LogLevel::Error, "cannot run '%s': %s", Argv[0],
        Dir ? "it is a directory" : std::strerror(Err));
    _exit(Err == ENOENT ? 127 : 126);
  }
  ChildPid = Pid;
  sigprocmask(SIG_SETMASK, &Old, nullptr);
  if (StopSignal)
    kill(Pid, StopSignal); // it came while the servers started
  int WStatus = 0;
  while (waitpid(Pid, &WStatus, 0) < 0 && errno == EINTR) {
  }
  ChildPid = 0;
  if (WIFSIGNALED(WStatus))
    return 128 + WTERMSIG(WStatus);
  return WEXITSTATUS(WStatus);
}

int cmdRun(int Argc, char **Argv) {
  tools::EmulatorOptions EO;
  EO.Count = 0;
  std::string Devices;
  bool HaveDevices = false;
  int K = 0;
  for (; K < Argc; ++K) {
    std::string A = Argv[K];
    auto Next = [&]() -> const char * {
      return K + 1 < Argc ? Argv[++K] : nullptr;
    };
    if (A == "--") {
      ++K;
      break;
    }
    const char *V = nullptr;
    int Taken = tools::takeEmulatorOption(Argc, Argv, K, EO);
    if (Taken < 0)
      return 2;
    if (Taken)
      continue;
    if (A == "--emulate") {
      EO.Count = tools::countFrom("--emulate", Next(), 1, 64);
      if (EO.Count < 0)
        return 2;
    } else if (A == "--help" || A == "-h") {
      std::printf("%s", Usage);
      return 0;
    } else if (A == "--devices") {
      V = Next();
      if (!V) {
        log(LogLevel::Error, "--devices needs HOST:PORT[,HOST:PORT...]");
        return 2;
      }
      Devices = V;
      HaveDevices = true;
    } else if (!A.empty() && A[0] == '-') {
      log(LogLevel::Error, "unknown option '%s'\n%s", A.c_str(), Usage);
      return 2;
    } else {
      break; // the program (without "--")
    }
  }
  if (K >= Argc) {
    log(LogLevel::Error, "no program given\n%s", Usage);
    return 2;
  }
  if (EO.Count && HaveDevices) {
    log(LogLevel::Error, "--emulate and --devices exclude each other");
    return 2;
  }
  if (HaveDevices) {
    auto L = parseDeviceList(Devices);
    if (!L) {
      log(LogLevel::Error, "--devices: %s", L.status().message().c_str());
      return 2;
    }
  }

  if (!EO.Count && !HaveDevices) {
    auto Cfg = loadClientConfig([](const char *N) { return std::getenv(N); });
    // A cluster map without this node: the plugin says so, naming the node.
    if (Cfg && Cfg->Devices.empty() && Cfg->NoDevicesReason.empty()) {
      // Said here: the program's no-DPU notice need not say it again.
      setenv("OMPDPU_NOTICE", "0", 0);
      log(LogLevel::Warning,
          "no DPUs: %s: target regions run on the host; give --emulate N "
          "or --devices HOST:PORT[,...]",
          std::getenv("OMPDPU_DEVICES")
              ? "OMPDPU_DEVICES is empty"
              : "OMPDPU_DEVICES is unset and no devices file lists one "
                "(`ompdpu info` says where it looks)");
    }
  }
  auto Plugins = pluginPath(Argv + K);
  if (!Plugins) {
    log(LogLevel::Error, "%s", Plugins.status().message().c_str());
    return 2;
  }

  // UCX writes its log (warnings included) to stdout unless told otherwise:
  // the program's output, and the emulated servers', would carry it.
  setenv("UCX_LOG_FILE", "stderr", 0);

  std::vector<tools::EmulatedServer> Servers;
  tools::CorePlan Plan;
  std::unique_ptr<tools::RunKey> Key;
  catchStopSignals();
  if (EO.Count) {
    auto K = tools::RunKey::create();
    if (!K) {
      log(LogLevel::Error, "%s", K.status().message().c_str());
      return 127;
    }
    Key = std::move(*K);
    EO.KeyFile = Key->path();
    setenv("OMPDPU_KEY", Key->path().c_str(), 1);
    auto S = tools::startEmulatedServers(serverExe(), EO, Plan);
    if (!S) {
      log(LogLevel::Error, "%s", S.status().message().c_str());
      return 127;
    }
    Servers = std::move(*S);
    if (StopSignal) {
      tools::stopServers(Servers);
      return 128 + StopSignal;
    }
    std::string Pids;
    Devices.clear();
    for (const auto &Srv : Servers) {
      Devices += (Devices.empty() ? "" : ",") + Srv.Address;
      Pids += (Pids.empty() ? "" : ",") + std::to_string(Srv.Pid);
    }
    setenv("OMPDPU_SERVER_PIDS", Pids.c_str(), 1);
    HaveDevices = true;
  }
  if (HaveDevices)
    setenv("OMPDPU_DEVICES", Devices.c_str(), 1);
  const char *Old = std::getenv("LD_LIBRARY_PATH");
  std::string Path = *Plugins + (Old && *Old ? ":" + std::string(Old) : "");
  setenv("LD_LIBRARY_PATH", Path.c_str(), 1);

  int Rc = runProgram(Argv + K, EO.Pin ? Plan.HostCores : std::vector<int>());
  tools::stopServers(Servers);
  return Rc;
}

/// The LLVM versions served and where each one's plugin lives.
void printPluginLayouts() {
  std::printf("LLVM versions served (`ompdpu run` picks the directory of the "
              "libomptarget a program loads; OMPDPU_PLUGIN_DIR overrides)\n");
  for (const PluginLayout &L : pluginLayouts()) {
    std::string Dir = libOmpdpuDir() + (*L.Sub ? "/" : "") + L.Sub;
    char *Real = realpath(Dir.c_str(), nullptr);
    std::string Versions = L.First == L.Last ? std::to_string(L.First)
                                             : format("%d-%d", L.First, L.Last);
    std::printf("  %-6s %s%s\n         %s\n", Versions.c_str(),
                Real ? Real : Dir.c_str(), Real ? "" : " (not built)", L.Files);
    if (*L.Note)
      std::printf("         %s\n", L.Note);
    std::free(Real);
  }
}

} // namespace

int main(int Argc, char **Argv) {
  setLogPrefix("ompdpu");
  if (Argc < 2 || !std::strcmp(Argv[1], "--help") ||
      !std::strcmp(Argv[1], "-h") || !std::strcmp(Argv[1], "help")) {
    std::fputs(Usage, Argc < 2 ? stderr : stdout);
    return Argc < 2 ? 2 : 0;
  }
  std::string Cmd = Argv[1];
  if (Cmd == "run")
    return cmdRun(Argc - 2, Argv + 2);
  if (Cmd == "emulate")
    return tools::cmdEmulate(Argc - 2, Argv + 2, serverExe());
  if (Cmd == "info")
    return tools::cmdInfo(Argc - 2, Argv + 2, printPluginLayouts);
  if (Cmd == "key")
    return tools::cmdKey(Argc - 2, Argv + 2);
  if (Cmd == "vm" || Cmd == "testbed") {
    // The arm64 VM and the cluster testbed live in the source tree
    // (scripts/ompdpu-vm, scripts/ompdpu-testbed).
    std::string Script =
        std::string(OMPDPU_SOURCE_DIR) + "/scripts/ompdpu-" + Cmd;
    setenv("OMPDPU_BUILD_DIR", (selfDir() + "/..").c_str(), 0);
    std::vector<char *> Args = {Script.data()};
    for (int K = 2; K < Argc; ++K)
      Args.push_back(Argv[K]);
    Args.push_back(nullptr);
    execv(Script.c_str(), Args.data());
    log(LogLevel::Error, "cannot run %s: %s", Script.c_str(),
        std::strerror(errno));
    return 127;
  }
  if (Cmd == "version") {
    std::printf("ompdpu 0.1.0 (protocol %u)\n", protocol::kVersion);
    return 0;
  }
  log(LogLevel::Error, "unknown command '%s'\n%s", Cmd.c_str(), Usage);
  return 2;
}
