//===- mpi_emulator.cpp - Emulated DPU servers as one MPI job -------------===//
#include "tools/mpi_emulator.h"

#include "common/log.h"

#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <netinet/in.h>
#include <random>
#include <sstream>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace ompdpu::tools {
namespace {

bool portFree(int Port) {
  int Fd = socket(AF_INET, SOCK_STREAM, 0);
  if (Fd < 0)
    return false;
  sockaddr_in A{};
  A.sin_family = AF_INET;
  A.sin_port = htons(static_cast<uint16_t>(Port));
  A.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool Ok = bind(Fd, reinterpret_cast<sockaddr *>(&A), sizeof(A)) == 0;
  close(Fd);
  return Ok;
}

/// A base port with N free consecutive ports on 127.0.0.1 (0: none found).
int freePortRange(int N) {
  std::mt19937 Rng(std::random_device{}());
  std::uniform_int_distribution<int> Pick(20000, 60000 - N);
  for (int Try = 0; Try < 200; ++Try) {
    int Base = Pick(Rng);
    int K = 0;
    while (K < N && portFree(Base + K))
      ++K;
    if (K == N)
      return Base;
  }
  return 0;
}

/// True when some socket listens on Port: the kernel's table, not a
/// connection, which the server would take for a client.
bool listening(int Port) {
  std::ifstream F("/proc/net/tcp");
  std::string Line;
  std::getline(F, Line); // the header
  while (std::getline(F, Line)) {
    std::istringstream S(Line);
    std::string Slot, Local, Remote, State;
    S >> Slot >> Local >> Remote >> State;
    size_t Colon = Local.find(':');
    if (State == "0A" && Colon != std::string::npos &&
        std::stoi(Local.substr(Colon + 1), nullptr, 16) == Port)
      return true;
  }
  return false;
}

/// mpirun ... -np 1 [taskset -c C] SERVER --mpi --listen 127.0.0.1:BASE ...
/// : -np 1 ..., one app context per DPU.
std::vector<std::string> jobArgs(const std::string &ServerExe,
                                 const EmulatorOptions &O,
                                 const std::vector<std::string> &Mpirun,
                                 const CorePlan &Plan, int Base) {
  std::vector<std::string> Args = Mpirun;
  for (size_t K = 0; K < Plan.DpuCores.size(); ++K) {
    if (K)
      Args.push_back(":");
    Args.insert(Args.end(), {"-np", "1"});
    std::string Cores = joinCores(Plan.DpuCores[K]);
    if (!Cores.empty()) // MPI's own threads start before --cores pins
      Args.insert(Args.end(), {"taskset", "-c", Cores});
    Args.insert(Args.end(), {ServerExe, "--mpi", "--listen",
                             "127.0.0.1:" + std::to_string(Base)});
    for (std::string &S : authArgs(O)) // the run's key, as separate servers get
      Args.push_back(std::move(S));
    if (!Cores.empty())
      Args.insert(Args.end(), {"--cores", Cores});
    for (std::string &S : sharingOptions(Plan, K))
      Args.push_back(std::move(S));
    if (!O.Memory.empty())
      Args.insert(Args.end(), {"--memory", O.Memory});
    if (O.Verbose)
      Args.push_back("--verbose");
  }
  return Args;
}

} // namespace

Expected<MpiJob> startMpiServers(const std::string &ServerExe,
                                 const EmulatorOptions &O,
                                 const std::vector<std::string> &Mpirun,
                                 CorePlan &Plan) {
  Plan = planFor(O);
  int Base = freePortRange(O.Count);
  if (!Base)
    return Status::error("no free ports for the MPI job of emulated DPUs");
  MpiJob Job;
  Job.Pid = spawn(jobArgs(ServerExe, O, Mpirun, Plan, Base), [&] {
    setsid(); // its own group: stopping it reaches every rank
    int Null = open("/dev/null", O_RDONLY); // mpirun forwards stdin to a rank
    if (Null >= 0)
      dup2(Null, 0);
    if (O.QuietStdout)
      dup2(2, 1);
  });
  if (Job.Pid < 0)
    return Status::error(format("fork: %s", std::strerror(errno)));
  for (int K = 0; K < O.Count; ++K)
    Job.Addresses.push_back("127.0.0.1:" + std::to_string(Base + K));
  auto Deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < Deadline) {
    int WStatus = 0;
    if (waitpid(Job.Pid, &WStatus, WNOHANG) == Job.Pid) {
      Job.Pid = -1;
      return Status::error(
          format("the MPI job of emulated DPUs (%s) ended before listening: %s",
                 Mpirun[0].c_str(), describeExit(WStatus).c_str()));
    }
    int Ready = 0;
    while (Ready < O.Count && listening(Base + Ready))
      ++Ready;
    if (Ready == O.Count)
      return Job;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  stopMpiJob(Job);
  return Status::error(
      "the MPI job of emulated DPUs did not listen within 30 s");
}

void stopMpiJob(MpiJob &Job) {
  if (Job.Pid <= 0)
    return;
  kill(Job.Pid, SIGTERM);
  auto Deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (waitpid(Job.Pid, nullptr, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > Deadline) {
      killpg(Job.Pid, SIGKILL);
      waitpid(Job.Pid, nullptr, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  Job.Pid = -1;
}

} // namespace ompdpu::tools
