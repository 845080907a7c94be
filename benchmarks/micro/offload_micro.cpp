// Micro-benchmarks of the offload path: what an empty target region costs,
// what small mapped data adds, and how fast mapped data moves. Built on
// Google Benchmark: each measurement is repeated (7 times by default) and
// reported as mean, median and spread; run_micro.py reads the medians from
// the JSON output (--benchmark_format=json). Runs against whatever devices
// libomptarget offers: an ompdpu DPU under `ompdpu run`, or LLVM's
// in-process host plugin for the floor.
//
//   ompdpu-offload-micro [--quick] [all|launch|maps|bandwidth|memcpy|d2d]
//                        [--benchmark_* options]
#include "micro_common.h"

#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

namespace {

using micro::Quick;
using micro::setup;
int Dev = 0;

/// One empty region, out of line: clang 16 allocates a region's kernel
/// arguments where the region is, so in a loop the stack grows with every
/// region and overflows after about 80,000 of them.
__attribute__((noinline)) void emptyRegionOnce() {
#pragma omp target device(Dev)
  {}
}

void emptyRegion(benchmark::State &State) {
  for (auto _ : State)
    emptyRegionOnce();
}

/// nowait regions in flight: a batch issued, then waited for once.
void nowaitRegions(benchmark::State &State) {
  const int Batch = Quick ? 200 : 1000;
  for (auto _ : State) {
    for (int I = 0; I < Batch; ++I) {
#pragma omp target device(Dev) nowait
      {}
    }
#pragma omp taskwait
  }
  State.counters["regions_per_s"] =
      benchmark::Counter(Batch, benchmark::Counter::kIsIterationInvariantRate);
}

/// The eight 64-byte arrays of smallMaps.
char A0[64], A1[64], A2[64], A3[64], A4[64], A5[64], A6[64], A7[64];

/// One region with the eight arrays to the device and a scalar back, out of
/// line for clang 16 (see emptyRegionOnce).
__attribute__((noinline)) int smallMapsOnce() {
  int X = 0;
#pragma omp target device(Dev) map(to                                          \
                                   : A0, A1, A2, A3, A4, A5, A6, A7) map(from  \
                                                                         : X)
  X = A0[0] + A1[1] + A2[2] + A3[3] + A4[4] + A5[5] + A6[6] + A7[63];
  return X;
}

/// Eight 64-byte arrays to the device and a scalar back.
void smallMaps(benchmark::State &State) {
  char *All[] = {A0, A1, A2, A3, A4, A5, A6, A7};
  for (int K = 0; K < 8; ++K)
    std::memset(All[K], K + 1, 64);
  int X = 0;
  for (auto _ : State)
    X = smallMapsOnce();
  if (X != 36)
    State.SkipWithError(
        ("small maps computed " + std::to_string(X) + ", expected 36").c_str());
  State.SetBytesProcessed(State.iterations() * 8 * 64);
}

/// A struct with a pointer member and its pointee, both tofrom: the
/// struct's retrieve must land before libomptarget restores the host's
/// pointer in it, so it cannot wait for synchronize with the others.
void structWithPointer(benchmark::State &State) {
  struct Vec {
    long N;
    double *P;
  };
  double Data[8] = {0};
  Vec V{8, Data};
  for (auto _ : State) {
#pragma omp target device(Dev) map(tofrom : V, V.P [0:8])
    {
      V.P[V.N - 1] += 1;
      V.N = 8;
    }
  }
  if (V.P != Data || Data[7] != static_cast<double>(State.iterations()))
    State.SkipWithError("struct region: wrong pointer or value after it");
}

/// The host buffer of the bandwidth benchmarks, mapped to the device for
/// their whole run, and a plain device allocation for omp_target_memcpy.
struct Buffers {
  char *Host = nullptr;
  char *Device = nullptr;
  long Size = 0;
} Buf;

void updateTo(benchmark::State &State, long S) {
  char *B = Buf.Host;
  for (auto _ : State) {
#pragma omp target update device(Dev) to(B [0:S])
  }
  State.SetBytesProcessed(State.iterations() * S);
}

void updateFrom(benchmark::State &State, long S) {
  char *B = Buf.Host;
  for (auto _ : State) {
#pragma omp target update device(Dev) from(B [0:S])
  }
  State.SetBytesProcessed(State.iterations() * S);
}

void targetMemcpyTo(benchmark::State &State, long S) {
  for (auto _ : State)
    omp_target_memcpy(Buf.Device, Buf.Host, S, 0, 0, Dev,
                      omp_get_initial_device());
  State.SetBytesProcessed(State.iterations() * S);
}

/// Back into the host buffer: the device allocation holds the same bytes
/// (see mapBuffers), so the buffer stays intact for the final check.
void targetMemcpyFrom(benchmark::State &State, long S) {
  for (auto _ : State)
    omp_target_memcpy(Buf.Host, Buf.Device, S, 0, 0, omp_get_initial_device(),
                      Dev);
  State.SetBytesProcessed(State.iterations() * S);
}

/// Device to device, between the first two devices (two emulated DPUs).
void deviceToDevice(benchmark::State &State, long S, char *Dst, char *Src) {
  for (auto _ : State)
    omp_target_memcpy(Dst, Src, S, 0, 0, 1, 0);
  State.SetBytesProcessed(State.iterations() * S);
}

/// Plain memcpy of 64 MiB between huge-page buffers: the physical ceiling.
void hostMemcpy(benchmark::State &State) {
  const long S = 64l << 20;
  char *A = nullptr, *B = nullptr;
  if (posix_memalign(reinterpret_cast<void **>(&A), 2 << 20, S) ||
      posix_memalign(reinterpret_cast<void **>(&B), 2 << 20, S)) {
    State.SkipWithError("out of memory");
    return;
  }
  madvise(A, S, MADV_HUGEPAGE);
  madvise(B, S, MADV_HUGEPAGE);
  std::memset(A, 1, S);
  std::memset(B, 2, S);
  for (auto _ : State) {
    std::memcpy(B, A, S);
    benchmark::DoNotOptimize(B);
    benchmark::ClobberMemory();
  }
  State.SetBytesProcessed(State.iterations() * S);
  std::free(A);
  std::free(B);
}

std::string sizeName(const char *What, long S) {
  return std::string(What) + "_" + std::to_string(S);
}

/// Map the bandwidth buffer (huge pages on the host side too, as
/// ucx_perftest's buffers have them: the zero-copy path copies page by page).
bool mapBuffers(long Max) {
  if (posix_memalign(reinterpret_cast<void **>(&Buf.Host), 2 << 20, Max))
    return false;
  madvise(Buf.Host, Max, MADV_HUGEPAGE);
  for (long I = 0; I < Max; ++I)
    Buf.Host[I] = static_cast<char>(I);
  Buf.Size = Max;
  char *B = Buf.Host;
#pragma omp target enter data device(Dev) map(to : B [0:Max])
  Buf.Device = static_cast<char *>(omp_target_alloc(Max, Dev));
  return Buf.Device != nullptr &&
         omp_target_memcpy(Buf.Device, Buf.Host, Max, 0, 0, Dev,
                           omp_get_initial_device()) == 0;
}

/// The data must come back intact after all the updates.
bool unmapBuffers() {
  char *B = Buf.Host;
  long Max = Buf.Size;
#pragma omp target update device(Dev) from(B [0:Max])
  bool Intact = true;
  for (long I = 0; I < Max && Intact; ++I)
    if (B[I] != static_cast<char>(I)) {
      std::fprintf(stderr, "offload_micro: byte %ld corrupted\n", I);
      Intact = false;
    }
  omp_target_free(Buf.Device, Dev);
#pragma omp target exit data device(Dev) map(delete : B [0:Max])
  std::free(B);
  return Intact;
}

} // namespace

int main(int Argc, char **Argv) {
  std::string Only = micro::parseArguments(Argc, Argv, "all");

  // Where do regions run? run_micro.py refuses a run on the host.
  int OnDevice = 0;
#pragma omp target device(Dev) map(from : OnDevice)
  OnDevice = getpid();
  std::fprintf(stderr,
               "offload_micro: %d device(s); regions run in process %d, "
               "host process %d\n",
               omp_get_num_devices(), OnDevice, static_cast<int>(getpid()));

  auto Wants = [&](const char *What) {
    return Only == What || (Only == "all" && std::strcmp(What, "memcpy") &&
                            std::strcmp(What, "d2d"));
  };
  if (Wants("launch")) {
    setup(benchmark::RegisterBenchmark("launch_empty_sync", emptyRegion))
        ->Unit(benchmark::kMicrosecond);
    setup(benchmark::RegisterBenchmark("launch_nowait_rate", nowaitRegions))
        ->Unit(benchmark::kMicrosecond);
  }
  if (Wants("maps")) {
    setup(benchmark::RegisterBenchmark("small_maps_8x64B", smallMaps))
        ->Unit(benchmark::kMicrosecond);
    setup(benchmark::RegisterBenchmark("small_maps_struct_ptr",
                                       structWithPointer))
        ->Unit(benchmark::kMicrosecond);
  }
  const std::vector<long> Sizes = {4l << 10, 64l << 10, 1l << 20, 16l << 20,
                                   256l << 20};
  const size_t NSizes = Quick ? 4 : 5;
  bool Bandwidth = Wants("bandwidth");
  if (Bandwidth) {
    if (!mapBuffers(Sizes[NSizes - 1])) {
      std::fprintf(stderr, "offload_micro: cannot map the bandwidth buffer\n");
      return 1;
    }
    for (size_t K = 0; K < NSizes; ++K) {
      long S = Sizes[K];
      setup(benchmark::RegisterBenchmark(sizeName("h2d_update", S).c_str(),
                                         updateTo, S));
      setup(benchmark::RegisterBenchmark(sizeName("d2h_update", S).c_str(),
                                         updateFrom, S));
      setup(benchmark::RegisterBenchmark(sizeName("h2d_memcpy", S).c_str(),
                                         targetMemcpyTo, S));
      setup(benchmark::RegisterBenchmark(sizeName("d2h_memcpy", S).c_str(),
                                         targetMemcpyFrom, S));
    }
  }
  if (Wants("memcpy"))
    setup(benchmark::RegisterBenchmark("host_memcpy_64MiB", hostMemcpy));
  char *D0 = nullptr, *D1 = nullptr;
  if (Wants("d2d") && omp_get_num_devices() >= 2) {
    const long Max = 16l << 20;
    D0 = static_cast<char *>(omp_target_alloc(Max, 0));
    D1 = static_cast<char *>(omp_target_alloc(Max, 1));
    for (long S : {64l << 10, 1l << 20, 16l << 20})
      setup(benchmark::RegisterBenchmark(sizeName("d2d_memcpy", S).c_str(),
                                         deviceToDevice, S, D1, D0));
  }

  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  int Rc = 0;
  if (Bandwidth && !unmapBuffers())
    Rc = 1;
  if (D0) {
    omp_target_free(D0, 0);
    omp_target_free(D1, 1);
  }
  return Rc;
}
