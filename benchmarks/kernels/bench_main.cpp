// dnnk-bench: dnnk's kernels against OpenBLAS, BLIS, oneDNN and memcpy on the
// same cores, in one run. Prints Markdown tables; --csv FILE also writes the
// numbers as CSV; --quick runs a smaller set in under 30 s.
#include <cblas.h>
#include <omp.h>
#include <sched.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>

#include "bench_sections.h"
#include "blis_backend.h"

namespace {

// Sets an environment variable unless the user already chose a value.
void default_env(const char *name, const char *value) {
  setenv(name, value, 0);
}

// CPUs this process may run on, as "0,1".
std::string allowed_cpus(int *count) {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::string list;
  *count = 0;
  if (sched_getaffinity(0, sizeof set, &set) != 0)
    return "?";
  for (int i = 0; i < CPU_SETSIZE; ++i)
    if (CPU_ISSET(i, &set)) {
      list += (list.empty() ? "" : ",") + std::to_string(i);
      ++*count;
    }
  return list;
}

// The 1-minute load average: other work on the cores skews every number.
double load_average() {
  double l = -1;
  if (FILE *f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf", &l) != 1)
      l = -1;
    std::fclose(f);
  }
  return l;
}

// The OpenBLAS kernels this CPU can run at their best when the loaded
// OpenBLAS chose slower ones (0.3.21 knows neither Emerald Rapids nor Zen 5
// and falls back to SSE3 "Prescott" or AVX2 "Zen" kernels), else null: the
// fair reference is the library's fastest code for the machine.
const char *better_openblas_core(const char *chosen) {
#if defined(__x86_64__)
  std::string c = chosen ? chosen : "";
  for (char &ch : c)
    ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  bool avx512 =
      __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  if (avx512 && c != "skylakex" && c != "cooperlake" && c != "sapphirerapids")
    return "SkylakeX";
  bool old = c == "prescott" || c == "core2" || c == "penryn" ||
             c == "dunnington" || c == "nehalem" || c == "atom" ||
             c == "katmai" || c == "coppermine" || c == "northwood" ||
             c == "banias";
  if (old && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return "Haswell";
#endif
  (void)chosen;
  return nullptr;
}

// Prints usage and exits.
[[noreturn]] void usage(const char *argv0, int code) {
  std::printf(
      "usage: %s [--quick] [--csv FILE] [--only gemm|square|conv|augment] "
      "[--layers TAG,...]\n"
      "  TAG: lenet1 lenet2 res3x3 res3x3s2 res1x1s2 cnn1 cnn2\n",
      argv0);
  std::exit(code);
}

} // namespace

int main(int argc, char **argv) {
  bench::Options opt;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick"))
      opt.quick = true;
    else if (!std::strcmp(argv[i], "--csv") && i + 1 < argc)
      opt.csv = argv[++i];
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc)
      only = argv[++i];
    else if (!std::strcmp(argv[i], "--layers") && i + 1 < argc)
      opt.layers = argv[++i];
    else if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h"))
      usage(argv[0], 0);
    else
      usage(argv[0], 2);
  }

  // OpenBLAS reads its variables when it is loaded, before main: the
  // process starts again with its timeout set (OpenBLAS's pool had spun for
  // about 0.1 s after each call and halved dnnk's next 2-thread runs). The
  // OMP_* ones stay unset for that start: libgomp would bind this thread to
  // the first place, and libomp would then see one CPU. libgomp's own spin
  // (oneDNN, BLIS) is left at its default, a few ms, within settle().
  if (!getenv("DNNK_BENCH_RESTARTED")) {
    default_env("OPENBLAS_THREAD_TIMEOUT", "20"); // 2^20 cycles, < 1 ms
    const char *chosen = openblas_get_corename();
    if (!getenv("OPENBLAS_CORETYPE"))
      if (const char *core = better_openblas_core(chosen)) {
        setenv("DNNK_BENCH_OPENBLAS_CHOSE", chosen, 1);
        setenv("OPENBLAS_CORETYPE", core, 1);
      }
    setenv("DNNK_BENCH_RESTARTED", "1", 1);
    execv("/proc/self/exe", argv);
    std::perror("dnnk-bench: restarting with its environment");
  }

  // One thread per allowed CPU, pinned, for every library. This must happen
  // before the first OpenMP call: the runtimes read these once.
  int ncpu = 0;
  std::string cpus = allowed_cpus(&ncpu);
  opt.threads = ncpu > 0 ? ncpu : 1;
  std::string nt = std::to_string(opt.threads);
  default_env("OMP_NUM_THREADS", nt.c_str());
  default_env("OMP_PROC_BIND", "close");
  default_env("OMP_PLACES", "cores");
  // Idle worker pools must stop spinning soon after a library is done, or
  // they steal the cores from the next one (see bench::settle).
  default_env("KMP_BLOCKTIME", "10");
  omp_set_num_threads(opt.threads);
  openblas_set_num_threads(opt.threads);
  if (bench::blis_available())
    bench::blis_set_threads(opt.threads);

  char date[32];
  std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::localtime(&now));
  char host[64] = "?";
  gethostname(host, sizeof host);
  std::printf("## dnnk-bench %s\n\n", opt.quick ? "(quick)" : "");
  std::printf("- date: %s, threads: %d pinned (OMP_PROC_BIND=%s, "
              "OMP_PLACES=%s) on CPUs %s\n",
              date, opt.threads, getenv("OMP_PROC_BIND"), getenv("OMP_PLACES"),
              cpus.c_str());
  const char *chose = getenv("DNNK_BENCH_OPENBLAS_CHOSE");
  std::string core_note =
      chose ? std::string(" (OPENBLAS_CORETYPE, set by dnnk-bench: OpenBLAS "
                          "chose ") +
                  chose + " for this CPU)"
      : getenv("OPENBLAS_CORETYPE") ? " (OPENBLAS_CORETYPE)"
                                    : "";
  // A core type from the environment (some machines set one for every
  // program) may be slower than the CPU's best: the ratios would flatter.
  if (const char *better = better_openblas_core(openblas_get_corename());
      better && !chose && getenv("OPENBLAS_CORETYPE")) {
    core_note += std::string(", WARNING: this CPU runs OpenBLAS's faster ") +
                 better +
                 " kernels, so dnnk/OpenBLAS ratios flatter dnnk: "
                 "unset OPENBLAS_CORETYPE or set it to " +
                 better + " for the fair reference";
    std::fprintf(stderr,
                 "dnnk-bench: warning: OPENBLAS_CORETYPE=%s from the "
                 "environment is slower than this CPU's %s kernels\n",
                 getenv("OPENBLAS_CORETYPE"), better);
  }
  std::printf("- OpenBLAS: %s, core %s%s\n", openblas_get_config(),
              openblas_get_corename(), core_note.c_str());
  std::printf("- BLIS: %s\n", bench::blis_available()
                                  ? bench::blis_arch().c_str()
                                  : "not found (libblis.so.4)");
  std::printf("- medians of repeated runs after a warm-up; each library "
              "runs alone on the cores; load average before the run: %.2f\n",
              load_average());

  bench::Report report;
  bench::GemmSummary gemm;
  if (only.empty() || only == "gemm")
    gemm = bench::run_gemm(opt, report);
  if (only.empty() || only == "gemm" || only == "square")
    bench::run_square_paired(opt, report);
  if (only.empty() || only == "conv")
    bench::run_conv(opt, report);
  if (only.empty() || only == "augment")
    bench::run_augment(opt, report);
  std::printf("\nLoad average after the run: %.2f (a value near or above "
              "the thread count means other work shared the cores).\n",
              load_average());
  if (!opt.csv.empty() && !report.write_csv(opt.csv)) {
    std::fprintf(stderr, "cannot write %s\n", opt.csv.c_str());
    return 1;
  }
  (void)gemm;
  return 0;
}
