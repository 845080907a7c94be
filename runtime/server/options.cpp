//===- options.cpp - ompdpu-server command line ---------------------------===//
#include "server/options.h"

#include "common/byte_size.h"

#include "common/log.h"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <sstream>

namespace ompdpu::server {

const char *serverUsage() {
  return "usage: ompdpu-server [--listen ADDR:PORT] [--cores LIST] "
         "[--memory BYTES] [--ready-fd N] [--spin-us N] [--shared-cores]\n"
         "       [--handshake-timeout S] [--max-sessions N] [--verbose] "
         "[--mpi]\n"
         "       (--key FILE... | --munge | --insecure) [--munge-socket PATH] "
         "[--root-user NAME]\n"
         "       [--root-sessions] [--max-sessions-per-user N] "
         "[--max-open-files N] [--max-processes N]\n"
         "       [--address-space BYTES] [--max-startups N[:M]]\n"
         "  --listen ADDR:PORT  address to accept clients on (default "
         "127.0.0.1:18515; on a\n"
         "                      BlueField the host-facing interface, e.g. "
         "192.168.100.2:18515\n"
         "                      (tmfifo_net0); 0.0.0.0: every interface; "
         "port 0 picks a free port)\n"
         "  --key FILE          accept clients that hold this key (`ompdpu key "
         "create FILE`);\n"
         "                      they run as the file's owner (repeatable: one "
         "per user)\n"
         "  --munge             accept clients with a MUNGE credential; they "
         "run as its uid\n"
         "  --munge-socket PATH munged's socket (default "
         "/run/munge/munge.socket.2)\n"
         "  --insecure          also serve clients that do not authenticate "
         "(as this server's\n"
         "                      user); without a key or MUNGE the server "
         "refuses to start\n"
         "                      unless told so\n"
         "  --root-user NAME    account of clients authenticated as root "
         "(default ompdpu)\n"
         "  --root-sessions     run root's sessions as root: only for a "
         "private emulated DPU\n"
         "                      started by root (ompdpu run --emulate)\n"
         "  --max-sessions-per-user N  sessions one user may hold (default "
         "16)\n"
         "  --max-open-files N  open files per session (default 4096)\n"
         "  --max-processes N   processes and threads of a session's user "
         "(default 4096)\n"
         "  --address-space BYTES  virtual memory per session (default: "
         "--memory + 16G)\n"
         "  --cores LIST        cores kernels may use, e.g. 0-3,6 (default: "
         "all this process may use)\n"
         "  --memory BYTES      device memory per client, e.g. 8G (default: "
         "90% of physical memory)\n"
         "  --ready-fd N        write {\"listening\":\"host:port\",\"pid\":N} "
         "to fd N once ready\n"
         "  --spin-us N         busy-poll this long before sleeping "
         "(default 1000)\n"
         "  --shared-cores      other busy processes share these cores "
         "(emulated DPUs):\n"
         "                      yield the core after every poll (else every "
         "64th)\n"
         "  --handshake-timeout S  drop a connection that sends no Hello "
         "within S seconds\n"
         "                      (default 10)\n"
         "  --max-startups N[:M]  close the oldest connections that sent no "
         "connection\n"
         "                      request yet beyond N in all and M from one "
         "address\n"
         "                      (default 512:64; they also get the handshake "
         "timeout)\n"
         "  --max-sessions N    refuse clients beyond N sessions at once "
         "(default 64)\n"
         "  --verbose           log every client and session\n"
         "  --mpi               run as one MPI job (mpirun -np K ompdpu-server "
         "--mpi ...):\n"
         "                      rank r listens on PORT+r and runs kernels in "
         "its own\n"
         "                      process, where they may call MPI; one client "
         "at "
         "a time\n";
}

static bool parseUnsigned(const std::string &S, unsigned long &V) {
  if (S.empty() || S.find_first_not_of("0123456789") != std::string::npos ||
      S.size() > 18)
    return false;
  V = std::strtoul(S.c_str(), nullptr, 10);
  return true;
}

Expected<std::vector<int>> parseCoreList(const std::string &S) {
  std::set<int> Out;
  std::stringstream SS(S);
  std::string Item;
  while (std::getline(SS, Item, ',')) {
    size_t Dash = Item.find('-');
    unsigned long A, B;
    if (Dash == std::string::npos) {
      if (!parseUnsigned(Item, A))
        return Status::error("bad core number '" + Item + "'");
      B = A;
    } else if (!parseUnsigned(Item.substr(0, Dash), A) ||
               !parseUnsigned(Item.substr(Dash + 1), B) || B < A) {
      return Status::error("bad core range '" + Item + "'");
    }
    if (B >= 4096)
      return Status::error("core number too large in '" + Item + "'");
    for (unsigned long C = A; C <= B; ++C)
      Out.insert(static_cast<int>(C));
  }
  if (Out.empty())
    return Status::error("empty core list");
  return std::vector<int>(Out.begin(), Out.end());
}

Expected<ServerOptions> parseServerOptions(int Argc, char **Argv) {
  ServerOptions O;
  for (int K = 1; K < Argc; ++K) {
    std::string A = Argv[K];
    auto Value = [&](std::string &Out) -> bool {
      if (K + 1 >= Argc)
        return false;
      Out = Argv[++K];
      return true;
    };
    std::string V;
    unsigned long N;
    if (A == "--listen") {
      if (!Value(O.Listen))
        return Status::error("--listen needs ADDR:PORT");
    } else if (A == "--cores") {
      if (!Value(V))
        return Status::error("--cores needs a list");
      auto L = parseCoreList(V);
      if (!L)
        return L.status().withContext("--cores");
      O.Cores = *L;
    } else if (A == "--memory") {
      if (!Value(V))
        return Status::error("--memory needs a size");
      auto B = parseByteSize(V);
      if (!B)
        return B.status().withContext("--memory");
      O.Memory = *B;
    } else if (A == "--ready-fd" || A == "--control-fd") {
      if (!Value(V) || !parseUnsigned(V, N) || N > 65535)
        return Status::error(A + " needs a file descriptor number");
      (A == "--ready-fd" ? O.ReadyFd : O.ControlFd) = static_cast<int>(N);
    } else if (A == "--spin-us") {
      if (!Value(V) || !parseUnsigned(V, N))
        return Status::error("--spin-us needs a number");
      O.SpinMicros = static_cast<double>(N);
    } else if (A == "--handshake-timeout") {
      if (!Value(V) || !parseUnsigned(V, N) || N == 0)
        return Status::error("--handshake-timeout needs a number of seconds");
      O.HandshakeTimeout = static_cast<double>(N);
    } else if (A == "--max-startups") {
      size_t Colon = Value(V) ? V.find(':') : std::string::npos;
      uint64_t PerSource = 0;
      if (V.empty() || !parseUnsigned(V.substr(0, Colon), N) || N == 0 ||
          N > 1000000 ||
          (Colon != std::string::npos &&
           (!parseUnsigned(V.substr(Colon + 1), PerSource) || PerSource == 0 ||
            PerSource > N)))
        return Status::error("--max-startups needs N or N:M, 1 <= M <= N <= "
                             "1000000");
      O.MaxStartups = static_cast<unsigned>(N);
      O.MaxStartupsPerSource = static_cast<unsigned>(
          Colon == std::string::npos ? std::min<uint64_t>(N, 64) : PerSource);
    } else if (A == "--max-sessions") {
      if (!Value(V) || !parseUnsigned(V, N) || N == 0 || N > 65535)
        return Status::error("--max-sessions needs a number from 1 to 65535");
      O.MaxSessions = static_cast<unsigned>(N);
    } else if (A == "--max-sessions-per-user") {
      if (!Value(V) || !parseUnsigned(V, N) || N == 0 || N > 65535)
        return Status::error(
            "--max-sessions-per-user needs a number from 1 to 65535");
      O.MaxSessionsPerUser = static_cast<unsigned>(N);
    } else if (A == "--key") {
      if (!Value(V) || V.empty())
        return Status::error("--key needs a key file");
      O.Keys.push_back(V);
    } else if (A == "--munge") {
      O.Munge = true;
    } else if (A == "--munge-socket") {
      if (!Value(O.MungeSocket) || O.MungeSocket.empty())
        return Status::error("--munge-socket needs a path");
    } else if (A == "--insecure") {
      O.Insecure = true;
    } else if (A == "--root-user") {
      if (!Value(O.RootUser) || O.RootUser.empty())
        return Status::error("--root-user needs an account name");
    } else if (A == "--root-sessions") {
      O.RootSessions = true;
    } else if (A == "--max-open-files" || A == "--max-processes") {
      // Beyond the kernel's nr_open (2^20 by default) every session fails.
      if (!Value(V) || !parseUnsigned(V, N) || N < 64 || N > (1u << 20))
        return Status::error(A + " needs a number from 64 to 1048576");
      (A == "--max-open-files" ? O.MaxOpenFiles : O.MaxProcesses) = N;
    } else if (A == "--address-space") {
      if (!Value(V))
        return Status::error("--address-space needs a size");
      auto B = parseByteSize(V);
      if (!B)
        return B.status().withContext("--address-space");
      // What a session maps before it serves (libraries, UCX's segments).
      if (*B < (256ull << 20))
        return Status::error(format("--address-space %s: a session needs at "
                                    "least 256M",
                                    V.c_str()));
      O.AddressSpace = *B;
    } else if (A == "--shared-cores") {
      O.SharedCores = true;
    } else if (A == "--verbose" || A == "-v") {
      O.Verbose = true;
    } else if (A == "--mpi") {
      O.Mpi = true;
    } else if (A == "--session") {
      O.Session = true;
    } else {
      return Status::error("unknown option '" + A + "'");
    }
  }
  if (O.Mpi && O.Session)
    return Status::error("--mpi and --session exclude each other");
  if (O.Session && O.ControlFd < 0)
    return Status::error("--session needs --control-fd");
  return O;
}

} // namespace ompdpu::server
