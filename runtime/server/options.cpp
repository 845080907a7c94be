//===- options.cpp - ompdpu-server command line ---------------------------===//
#include "server/options.h"

#include "common/log.h"

#include <cstdlib>
#include <set>
#include <sstream>

namespace ompdpu::server {

const char *serverUsage() {
  return "usage: ompdpu-server [--listen ADDR:PORT] [--cores LIST] "
         "[--memory BYTES] [--ready-fd N] [--spin-us N] [--shared-cores]\n"
         "       [--handshake-timeout S] [--max-sessions N] [--verbose] "
         "[--mpi]\n"
         "  --listen ADDR:PORT  address to accept clients on (default "
         "0.0.0.0:18515; port 0 picks a free port)\n"
         "  --cores LIST        cores kernels may use, e.g. 0-3,6 (default: "
         "all this process may use)\n"
         "  --memory BYTES      device memory per client, e.g. 8G (default: "
         "90% of physical memory)\n"
         "  --ready-fd N        write \"LISTENING host:port\" to fd N once "
         "ready\n"
         "  --spin-us N         busy-poll this long before sleeping "
         "(default 1000)\n"
         "  --shared-cores      other busy processes share these cores "
         "(emulated DPUs):\n"
         "                      yield the core after every poll (else every "
         "64th)\n"
         "  --handshake-timeout S  drop a connection that sends no Hello "
         "within S seconds\n"
         "                      (default 10)\n"
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

Expected<uint64_t> parseByteSize(const std::string &S) {
  if (S.empty())
    return Status::error("empty size");
  uint64_t Mult = 1;
  std::string Num = S;
  char Last = S.back();
  if (Last == 'K' || Last == 'k')
    Mult = 1ull << 10;
  else if (Last == 'M' || Last == 'm')
    Mult = 1ull << 20;
  else if (Last == 'G' || Last == 'g')
    Mult = 1ull << 30;
  if (Mult != 1)
    Num.pop_back();
  unsigned long V;
  if (!parseUnsigned(Num, V) || V == 0)
    return Status::error("bad size '" + S + "' (examples: 4096, 512M, 8G)");
  if (V > (~0ull) / Mult)
    return Status::error("size '" + S + "' is too large");
  return V * Mult;
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
    } else if (A == "--max-sessions") {
      if (!Value(V) || !parseUnsigned(V, N) || N == 0 || N > 65535)
        return Status::error("--max-sessions needs a number from 1 to 65535");
      O.MaxSessions = static_cast<unsigned>(N);
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
