//===- soak_client.cpp - random offload load for the soak test ------------===//
// Threads run a seeded random mix of device operations against device 0 for a
// given time; every byte that comes back is checked against the host's
// expectation. One line of JSON at the end (tests/soak/README.md).
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

/// What one thread did: counters and latencies (µs) per kind of operation.
struct Tally {
  long Ops = 0, Bytes = 0, Corrupt = 0, Lost = 0;
  std::map<std::string, std::vector<double>> Lat;
};

/// The device's transform of byte I of a buffer, computed the same on host.
#pragma omp declare target
inline unsigned char transform(unsigned char B, long I, unsigned char Key) {
  return static_cast<unsigned char>(B * 3u + (I & 0xff) + Key);
}
#pragma omp end declare target

/// Runs F and records its latency under Kind.
template <typename F> void timed(Tally &T, const char *Kind, F &&Fn) {
  auto T0 = Clock::now();
  Fn();
  double Us =
      std::chrono::duration<double, std::micro>(Clock::now() - T0).count();
  T.Lat[Kind].push_back(Us);
  ++T.Ops;
}

/// A size from 8 B to 16 MiB, log-uniform.
long randomSize(std::mt19937_64 &R, long MaxBytes) {
  std::uniform_real_distribution<double> D(3.0, std::log2(double(MaxBytes)));
  return std::max(8L, static_cast<long>(std::exp2(D(R))));
}

void fill(std::vector<unsigned char> &V, std::mt19937_64 &R) {
  for (auto &B : V)
    B = static_cast<unsigned char>(R());
}

/// Applies the device's transform on the host, the expectation.
void expect(std::vector<unsigned char> &V, unsigned char Key) {
  for (size_t I = 0; I < V.size(); ++I)
    V[I] = transform(V[I], static_cast<long>(I), Key);
}

long countDiff(const std::vector<unsigned char> &A,
               const std::vector<unsigned char> &B) {
  long N = 0;
  for (size_t I = 0; I < A.size(); ++I)
    N += A[I] != B[I];
  return N;
}

/// omp_target_alloc, memcpy in, kernel on the raw pointer, memcpy out, free.
void opAllocMemcpy(Tally &T, std::mt19937_64 &R, long MaxBytes, int Dev) {
  long N = randomSize(R, MaxBytes);
  unsigned char Key = static_cast<unsigned char>(R());
  std::vector<unsigned char> Host(N), Want, Got(N);
  fill(Host, R);
  Want = Host;
  expect(Want, Key);
  int Host0 = omp_get_initial_device();
  unsigned char *D = nullptr;
  timed(T, "alloc",
        [&] { D = static_cast<unsigned char *>(omp_target_alloc(N, Dev)); });
  if (!D) {
    ++T.Lost;
    return;
  }
  int Rc = 0;
  timed(T, "memcpy",
        [&] { Rc |= omp_target_memcpy(D, Host.data(), N, 0, 0, Dev, Host0); });
  timed(T, "kernel", [&] {
#pragma omp target is_device_ptr(D) device(Dev)
    for (long I = 0; I < N; ++I)
      D[I] = transform(D[I], I, Key);
  });
  timed(T, "memcpy",
        [&] { Rc |= omp_target_memcpy(Got.data(), D, N, 0, 0, Host0, Dev); });
  timed(T, "free", [&] { omp_target_free(D, Dev); });
  T.Lost += Rc != 0;
  T.Bytes += 2 * N;
  T.Corrupt += countDiff(Want, Got);
}

/// The kernel of opMapped: transform P[0:N], already mapped, on the device.
void transformMapped(unsigned char *P, long N, unsigned char Key, int Dev) {
#pragma omp target map(alloc : P [0:N]) device(Dev)
  for (long I = 0; I < N; ++I)
    P[I] = transform(P[I], I, Key);
}

/// enter data, kernel, update from, host change, update to, kernel, exit data.
void opMapped(Tally &T, std::mt19937_64 &R, long MaxBytes, int Dev) {
  long N = randomSize(R, MaxBytes);
  unsigned char K1 = static_cast<unsigned char>(R()),
                K2 = static_cast<unsigned char>(R());
  std::vector<unsigned char> V(N), Want;
  fill(V, R);
  Want = V;
  unsigned char *P = V.data();
  timed(T, "enter", [&] {
#pragma omp target enter data map(to : P [0:N]) device(Dev)
  });
  timed(T, "kernel", [&] { transformMapped(P, N, K1, Dev); });
  expect(Want, K1);
  timed(T, "update", [&] {
#pragma omp target update from(P [0:N]) device(Dev)
  });
  T.Corrupt += countDiff(Want, V);
  V = Want; // a corrupt copy must not spoil the next check
  P = V.data();
  P[0] ^= 0x5a; // the host changes a byte; update to must carry it
  Want[0] = P[0];
  timed(T, "update", [&] {
#pragma omp target update to(P [0:N]) device(Dev)
  });
  timed(T, "kernel", [&] { transformMapped(P, N, K2, Dev); });
  expect(Want, K2);
  timed(T, "exit", [&] {
#pragma omp target exit data map(from : P [0:N]) device(Dev)
  });
  T.Bytes += 4 * N;
  T.Corrupt += countDiff(Want, V);
}

/// Two nowait regions chained by depend: B reads what A wrote.
void opNowait(Tally &T, std::mt19937_64 &R, long MaxBytes, int Dev) {
  long N = randomSize(R, MaxBytes);
  unsigned char Key = static_cast<unsigned char>(R());
  std::vector<unsigned char> A(N), B(N, 0), WantA, WantB(N);
  fill(A, R);
  WantA = A;
  expect(WantA, Key);
  for (long I = 0; I < N; ++I)
    WantB[I] = transform(WantA[I], I, 1);
  unsigned char *PA = A.data(), *PB = B.data();
  timed(T, "nowait", [&] {
#pragma omp target map(tofrom : PA [0:N]) device(Dev) nowait depend(out : PA[0])
    for (long I = 0; I < N; ++I)
      PA[I] = transform(PA[I], I, Key);
#pragma omp target map(to                                                      \
                       : PA [0:N]) map(from                                    \
                                       : PB [0:N]) device(Dev) nowait          \
depend(in                                                                      \
       : PA[0]) depend(out                                                     \
                       : PB[0])
    for (long I = 0; I < N; ++I)
      PB[I] = transform(PA[I], I, 1);
#pragma omp taskwait
  });
  T.Bytes += 4 * N;
  T.Corrupt += countDiff(WantA, A) + countDiff(WantB, B);
}

/// One thread's loop until the deadline.
void worker(Tally *T, uint64_t Seed, Clock::time_point End, long MaxBytes) {
  std::mt19937_64 R(Seed);
  int Dev = 0;
  while (Clock::now() < End) {
    switch (R() % 3) {
    case 0:
      opAllocMemcpy(*T, R, MaxBytes, Dev);
      break;
    case 1:
      opMapped(*T, R, MaxBytes, Dev);
      break;
    default:
      opNowait(*T, R, MaxBytes, Dev);
    }
  }
}

double percentile(std::vector<double> &V, double Q) {
  std::sort(V.begin(), V.end());
  return V.empty() ? 0 : V[std::min(V.size() - 1, size_t(Q * V.size()))];
}

void printJson(Tally &All) {
  std::printf("{\"ops\":%ld,\"bytes\":%ld,\"corrupt\":%ld,\"lost\":%ld,"
              "\"latency_us\":{",
              All.Ops, All.Bytes, All.Corrupt, All.Lost);
  const char *Sep = "";
  for (auto &[Kind, V] : All.Lat) {
    std::printf("%s\"%s\":{\"n\":%zu,\"p50\":%.1f,\"p99\":%.1f}", Sep,
                Kind.c_str(), V.size(), percentile(V, 0.5),
                percentile(V, 0.99));
    Sep = ",";
  }
  std::printf("}}\n");
}

/// The session's process id: proves the regions run remotely, and tells the
/// driver which session to kill to hit this client.
int sessionPid() {
  int Pid = -1;
#pragma omp target map(from : Pid) device(0)
  Pid = getpid();
  return Pid;
}

} // namespace

int main(int Argc, char **Argv) {
  double Seconds = Argc > 1 ? std::atof(Argv[1]) : 5;
  uint64_t Seed = Argc > 2 ? std::strtoull(Argv[2], nullptr, 10) : 1;
  int Threads = Argc > 3 ? std::atoi(Argv[3]) : 4;
  long MaxBytes = Argc > 4 ? std::atol(Argv[4]) : 16L << 20;
  setvbuf(stdout, nullptr, _IOLBF, 0);
  int Pid = sessionPid();
  std::printf("session-pid: %d host-pid: %d\n", Pid, getpid());
  auto End = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                std::chrono::duration<double>(Seconds));
  std::vector<Tally> T(Threads);
  // An OpenMP team, not std::threads: libomp 14 has no task team for nowait
  // tasks of foreign threads (assertion or crash in __kmpc_omp_task_with_deps).
#pragma omp parallel num_threads(Threads)
  worker(&T[omp_get_thread_num()], Seed * 1000 + omp_get_thread_num(), End,
         MaxBytes);
  Tally All;
  for (int K = 0; K < Threads; ++K) {
    All.Ops += T[K].Ops, All.Bytes += T[K].Bytes;
    All.Corrupt += T[K].Corrupt, All.Lost += T[K].Lost;
    for (auto &[Kind, V] : T[K].Lat)
      All.Lat[Kind].insert(All.Lat[Kind].end(), V.begin(), V.end());
  }
  printJson(All);
  return All.Corrupt || All.Lost ? 1 : 0;
}
