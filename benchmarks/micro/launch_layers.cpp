// Where an empty target region's round trip goes, layer by layer, measured
// in the same way as the region itself (Google Benchmark, wall-clock time,
// 7 repetitions, medians):
//
//   transport   our transport::Worker alone: a 16-byte frame and a 24-byte
//               answer between two processes, as ucx_perftest does with UCX
//               (forks its peer; run it outside `ompdpu run`);
//   client      + the protocol client and the server's session: a Run of an
//               empty kernel through client::Connection, and its reply;
//   device      + the plugin's device logic: DpuDevice::launch and
//               synchronize, as libomptarget calls them.
//
// The full OpenMP region (ompdpu-offload-micro's launch_empty_sync) adds
// libomptarget. run_micro.py prints the four side by side.
//
//   ompdpu-launch-layers transport [--quick] [--cores A,B]
//   ompdpu run --emulate 1 --pin -- ompdpu-launch-layers device [--quick]
#include "client/connection.h"
#include "common/config.h"
#include "dpu_device.h"
#include "protocol/messages.h"
#include "transport/transport.h"

#include "micro_common.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sched.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace ompdpu;

namespace {

/// As ompdpu-offload-micro measures the region, in microseconds.
benchmark::internal::Benchmark *setup(benchmark::internal::Benchmark *B) {
  return micro::setup(B)->Unit(benchmark::kMicrosecond);
}

[[noreturn]] void die(const std::string &Msg) {
  std::fprintf(stderr, "ompdpu-launch-layers: %s\n", Msg.c_str());
  std::exit(1);
}

void pinTo(int Core) {
  cpu_set_t Set;
  CPU_ZERO(&Set);
  CPU_SET(Core, &Set);
  sched_setaffinity(0, sizeof(Set), &Set);
}

void writeBlob(int Fd, const std::vector<uint8_t> &B) {
  uint32_t N = B.size();
  if (write(Fd, &N, 4) != 4 || write(Fd, B.data(), N) != ssize_t(N))
    die("cannot pass a worker address");
}

std::vector<uint8_t> readBlob(int Fd) {
  uint32_t N = 0;
  if (read(Fd, &N, 4) != 4)
    die("cannot read a worker address");
  std::vector<uint8_t> B(N);
  size_t Got = 0;
  while (Got < N) {
    ssize_t R = read(Fd, B.data() + Got, N - Got);
    if (R <= 0)
      die("cannot read a worker address");
    Got += R;
  }
  return B;
}

// ---- transport --------------------------------------------------------------

/// The peer: answers every frame with a 24-byte one (a successful Reply's
/// size), until killed.
[[noreturn]] void echoPeer(int Core, int ToParent, int FromParent) {
  pinTo(Core);
  auto W = transport::Worker::create("sm,self");
  if (!W)
    die(W.status().message());
  writeBlob(ToParent, (*W)->address());
  auto Back = (*W)->connectToWorker(readBlob(FromParent));
  if (!Back)
    die(Back.status().message());
  uint64_t Got = 0, Answered = 0;
  (*W)->setHandler([&](const uint8_t *, size_t, const transport::BulkData &,
                       transport::Peer) {
    ++Got;
    return false;
  });
  const uint8_t Answer[24] = {};
  for (;;) {
    (*W)->progress();
    while (Answered < Got) {
      if (!(*W)->trySend(*Back, Answer, sizeof(Answer), nullptr, 0, false))
        (*W)->progress();
      else
        ++Answered;
    }
  }
}

int runTransport(int ClientCore, int PeerCore) {
  int Up[2], Down[2];
  if (pipe(Up) || pipe(Down))
    die("pipe failed");
  pid_t Pid = fork();
  if (Pid == 0)
    echoPeer(PeerCore, Up[1], Down[0]);
  pinTo(ClientCore);
  auto W = transport::Worker::create("sm,self");
  if (!W)
    die(W.status().message());
  auto To = (*W)->connectToWorker(readBlob(Up[0]));
  if (!To)
    die(To.status().message());
  writeBlob(Down[1], (*W)->address());
  uint64_t Answers = 0;
  (*W)->setHandler([&](const uint8_t *, size_t, const transport::BulkData &,
                       transport::Peer) {
    ++Answers;
    return false;
  });
  const uint8_t Frame[16] = {};
  setup(benchmark::RegisterBenchmark(
      "layer_transport", [&](benchmark::State &State) {
        for (auto _ : State) {
          uint64_t Want = Answers + 1;
          // With the sender endpoint, as every request of ours is sent.
          while (!(*W)->trySend(*To, Frame, sizeof(Frame), nullptr, 0, true))
            (*W)->progress();
          while (Answers < Want)
            (*W)->progress();
        }
      }));
  benchmark::RunSpecifiedBenchmarks();
  kill(Pid, SIGKILL);
  waitpid(Pid, nullptr, 0);
  return 0;
}

// ---- client and device
// --------------------------------------------------------

std::string ownDirectory() {
  char Buf[4096];
  ssize_t N = readlink("/proc/self/exe", Buf, sizeof(Buf) - 1);
  if (N <= 0)
    return ".";
  std::string P(Buf, N);
  return P.substr(0, P.rfind('/'));
}

int runDevice() {
  const char *List = std::getenv("OMPDPU_DEVICES");
  if (!List || !*List)
    die("OMPDPU_DEVICES is not set: run under `ompdpu run --emulate 1 --pin`");
  auto Addrs = parseDeviceList(List);
  if (!Addrs || Addrs->empty())
    die("OMPDPU_DEVICES: cannot parse '" + std::string(List) + "'");
  // OMPDPU_KEY and the timeouts, as the plugin reads them.
  auto FromEnv = loadClientConfig([](const char *N) { return std::getenv(N); });
  if (!FromEnv)
    die(FromEnv.status().message());
  ClientConfig Cfg = *FromEnv;
  std::string ImagePath = ownDirectory() + "/ompdpu-layers-kernel.so";
  std::ifstream F(ImagePath, std::ios::binary);
  std::vector<char> Image((std::istreambuf_iterator<char>(F)), {});
  if (Image.empty())
    die("cannot read " + ImagePath);

  // The protocol client alone: its own connection (and session).
  auto C = client::Connection::open((*Addrs)[0], Cfg);
  if (!C)
    die(C.status().message());
  client::Connection &Conn = **C;
  client::Ticket L = Conn.loadImage(Image.data(), Image.size());
  if (Status S = Conn.wait(L); !S.ok())
    die("cannot load " + ImagePath + ": " + S.message());
  std::vector<protocol::EntryInfo> Entries;
  if (!protocol::decodeEntries(L->Payload.data(), L->Payload.size(), Entries)
           .ok() ||
      Entries.size() != 1 || !Entries[0].Kernel)
    die("unexpected entry table in " + ImagePath);
  uint16_t Kernel = Entries[0].Kernel;
  uint32_t Seq = 0;
  setup(benchmark::RegisterBenchmark(
      "layer_client", [&](benchmark::State &State) {
        for (auto _ : State)
          if (Status S = Conn.wait(Conn.run(Kernel, nullptr, 0, 1, Seq++));
              !S.ok()) {
            State.SkipWithError(S.message().c_str());
            break;
          }
      }));

  // The plugin's device logic on a second connection, as libomptarget
  // drives it: a queue per region, given back at synchronize.
  auto C2 = client::Connection::open((*Addrs)[0], Cfg);
  if (!C2)
    die(C2.status().message());
  plugin::DpuDevice Device(0, 1, std::move(*C2));
  auto Loaded = Device.loadImage(Image.data(), Image.size(),
                                 {{"layers_empty_kernel", 0}});
  if (!Loaded)
    die(Loaded.status().message());
  plugin::KernelRecord *Record = (*Loaded)[0].Kernel;
  setup(benchmark::RegisterBenchmark(
      "layer_device", [&](benchmark::State &State) {
        for (auto _ : State) {
          plugin::AsyncQueue *Q = Device.acquireQueue();
          Status S = Device.launch(Record, nullptr, 0, Q);
          Status Sync = Device.synchronize(Q);
          if (S.ok())
            S = Sync;
          if (!S.ok()) {
            State.SkipWithError(S.message().c_str());
            break;
          }
        }
      }));
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}

} // namespace

int main(int Argc, char **Argv) {
  int Cores[2] = {0, 1};
  std::string Mode =
      micro::parseArguments(Argc, Argv, "device", [&](int Left, char **A) {
        if (Left < 2 || std::strcmp(A[0], "--cores"))
          return 0;
        std::sscanf(A[1], "%d,%d", &Cores[0], &Cores[1]);
        return 2;
      });
  if (Mode == "transport")
    return runTransport(Cores[0], Cores[1]);
  if (Mode == "device")
    return runDevice();
  die("unknown mode '" + Mode + "' (transport or device)");
}
