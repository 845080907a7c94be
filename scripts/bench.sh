#!/usr/bin/env bash
# The benchmark suite (benchmarks/suite): installs what is missing, builds,
# starts emulated DPUs and runs every workload three ways -- on the host,
# offloaded to the DPU with OpenMP, and by an MPI rank on the DPU -- with
# repetitions, then writes the report directory (default report/):
# summary.md, results.csv, results.json, *.png, and the micro-benchmarks;
# then trains the reference CNN on Fashion-MNIST each way (host, offload,
# mpi, worker) beside PyTorch (benchmarks/training), into report/training/;
# then trains on 1-4 nodes of the cluster testbed three ways (benchmarks/cluster),
# into report/cluster/.
#
#   scripts/bench.sh            # full run (about 25 minutes once built)
#   scripts/bench.sh --quick    # CI run (about 5 minutes once built; no PyTorch)
#
# It prints its expected duration first and a line per stage with the time
# elapsed and left (scripts/lib/stages.sh: from the last run on this machine).
# Options go to benchmarks/suite/run_suite.py
# (--out DIR, --reps N, --only augment,halo2k,halo4k,conv3x3,conv1x1,
# --ranks K, --mpi-pml ob1|ucx, --no-micro, ...; see --help). OMPDPU_BUILD selects the
# build directory (default build), JOBS the build parallelism.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${OMPDPU_BUILD:-build}
source scripts/lib/stages.sh

for a in "$@"; do
  if [[ $a == -h || $a == --help ]]; then
    sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
    exec /usr/bin/python3 benchmarks/suite/run_suite.py --help
  fi
done

deps() {
echo "bench: installing what is missing" >&2
scripts/install-deps.sh
# Plots: Debian's matplotlib (for the system python3, which the runner uses).
if ! dpkg-query -W -f='${Status}' python3-matplotlib 2>/dev/null | grep -q "install ok installed"; then
  SUDO=""
  [[ $(id -u) -eq 0 ]] || SUDO=sudo
  $SUDO apt-get update -qq || true
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends python3-matplotlib \
    || echo "bench: python3-matplotlib could not be installed: the report will have no plots" >&2
fi
}

build() {
echo "bench: building in $BUILD" >&2
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
targets=(ompdpu-server ompdpu-cli ompdpu ompdpu-plugins suite ompdpu-train)
# The micro-benchmarks (benchmarks/micro) go into the report when present.
available=$(cmake --build "$BUILD" --target help 2>/dev/null || true)
for t in ompdpu-offload-micro ompdpu-mpi-pingpong ompdpu-launch-layers; do
  grep -q "^$t:" <<<"$available" && targets+=("$t")
done
cmake --build "$BUILD" -j"${JOBS:-2}" --target "${targets[@]}"
}

# libomptarget with llvm-patches/ applied, for the micro-benchmarks' rows
# that show what the patches save (about 130 MB of LLVM source the first time).
patches() {
OMPDPU_BUILD=$BUILD bash llvm-patches/apply-and-test.sh --build-only ||
  echo "bench: llvm-patches/ could not be built: the micro-benchmark table will have no patched rows" >&2
}

suite() {
/usr/bin/python3 benchmarks/suite/run_suite.py --build "$BUILD" "$@"
}

# The training benchmark, into the report's training/ directory.
out=report
# Three repetitions, medians, and twelve more of the three ways that decide
# the offload targets: their margins are about 1% of an epoch, less than this
# VM's drift between runs.
quick=(--reps 3 --pair-reps 12)
prev=""
for a in "$@"; do
  case "$a" in
    --quick) quick=(--quick --no-pytorch) ;;
    --out=*) out=${a#--out=} ;;
  esac
  [[ $prev == --out ]] && out=$a
  prev=$a
done
training() {
/usr/bin/python3 benchmarks/training/run_training.py --build "$BUILD" \
  --out "$out/training" "${quick[@]}"
}

# Training across 1, 2 and 4 nodes of the cluster testbed, three ways, weak
# and strong scaling, into the report's cluster/ directory (root: namespaces).
cluster=(--nodes 1,2,4 --reps 3)
[[ " ${quick[*]} " == *" --quick "* ]] && cluster=(--nodes 1,2 --scaling weak --quick)
cluster_training() {
local rc=0
/usr/bin/python3 benchmarks/cluster/run_cluster.py --build "$BUILD" --out "$out/cluster" \
  "${cluster[@]}" || rc=$?
if ((rc == 77)); then
  echo "bench: the cluster testbed needs root and network namespaces: no cluster runs" >&2
elif ((rc != 0)); then
  return "$rc"
fi
}

# The stages in order, with built-in estimates (s) on the 2-core machine.
if [[ " ${quick[*]} " == *" --quick "* ]]; then
  stages_begin bench bench-quick deps=20 build=60 patches=30 suite=150 training=60 cluster=60
else
  stages_begin bench bench deps=20 build=60 patches=30 suite=780 training=540 cluster=360
fi
stage deps deps
stage build build
stage patches patches
stage suite suite "$@"
stage training training
stage cluster cluster_training
stages_end
