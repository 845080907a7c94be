#!/usr/bin/env bash
# LLVM's own libomptarget test suite against ompdpu (ctest label conformance).
#
#   tests/conformance/run.sh [--build DIR] [--rebaseline] [-v] [TEST...]
#
# 1. Gets openmp/libomptarget/test from the Debian source of the installed
#    LLVM (llvm-patches/fetch-source.sh: the exact installed version, checked;
#    downloads kept in ~/.cache/ompdpu/llvm-src) and unpacks it into
#    <build>/tests/conformance/src.
# 2. Writes a lit.site.cfg per pass that points the suite's own lit.cfg at the
#    installed LLVM 14 (tests/conformance/site_config.py), target
#    x86_64-pc-linux-gnu only.
# 3. Baseline: the suite with LLVM's stock host plugin (programs run as they
#    are). Its results depend only on the LLVM install and this runner, so they
#    are kept in $OMPDPU_CONFORMANCE_CACHE (default ~/.cache/ompdpu/conformance)
#    under a key of the source version, clang's version, the installed
#    libomptarget, plugin and libomp, and the runner's files; --rebaseline
#    recomputes them.
# 4. The suite again, every program run as
#    `env OMP_TARGET_OFFLOAD=mandatory <build>/bin/ompdpu run --emulate 2 --`
#    (ompdpu's x86_64-named plugin replaces the host plugin), plus the probe
#    tests (tests/conformance/probe: the regions really ran in a server).
# 5. compare.py: fails when a test that passes with the host plugin does not
#    pass with ompdpu, unless tests/conformance/skipped.txt says why it cannot
#    apply to a remote device (those are not run with ompdpu).
#
# TEST... (paths inside openmp/libomptarget/test, e.g. mapping/pr38704.c):
# run only these, both ways, no cache, with lit's full output (-a).
# 120 s per test (lit --timeout, with python3-psutil), 2 tests at a time.
#
# Environment: OMPDPU_BUILD (default build), OMPDPU_LLVM_SRC_CACHE,
# OMPDPU_CONFORMANCE_CACHE, OMPDPU_CONFORMANCE_TIMEOUT (120),
# OMPDPU_CONFORMANCE_JOBS (2).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=${OMPDPU_BUILD:-$ROOT/build}
REBASELINE=0
VERBOSE=0
TESTS=()
while (($#)); do
  case $1 in
  --build) BUILD=$2; shift ;;
  --build=*) BUILD=${1#*=} ;;
  --rebaseline) REBASELINE=1 ;;
  -v) VERBOSE=1 ;;
  -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  -*) echo "conformance: unknown option '$1' (see --help)" >&2; exit 2 ;;
  *) TESTS+=("$1") ;;
  esac
  shift
done
log() { echo "[conformance] $*" >&2; }
die() { echo "conformance: error: $*" >&2; exit 1; }

BUILD=$(realpath -m "$BUILD")
OUT=$BUILD/tests/conformance
LLVM=/usr/lib/llvm-14
LIT=$LLVM/build/utils/lit/lit.py
OMPDPU=$BUILD/bin/ompdpu
TIMEOUT=${OMPDPU_CONFORMANCE_TIMEOUT:-120}
JOBS=${OMPDPU_CONFORMANCE_JOBS:-2}
EMULATE=2
CACHE=$(realpath -m "${OMPDPU_CONFORMANCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ompdpu/conformance}")
[[ -x $OMPDPU && -x $BUILD/bin/ompdpu-server ]] || die "$OMPDPU or ompdpu-server is missing: build first"
[[ -f $LIT ]] || die "$LIT is missing (llvm-14-tools)"
for t in clang clang++ FileCheck not; do
  [[ -x $LLVM/bin/$t ]] || die "$LLVM/bin/$t is missing"
done
[[ -e $LLVM/lib/libomptarget.rtl.x86_64.so ]] || die "LLVM's host plugin $LLVM/lib/libomptarget.rtl.x86_64.so is missing"
PY=python3
if /usr/bin/python3 -c 'import psutil' 2>/dev/null; then
  PY=/usr/bin/python3
elif ! python3 -c 'import psutil' 2>/dev/null; then
  log "no python3 with psutil (apt-get install python3-psutil): runs wrapped in \`timeout $TIMEOUT\`"
fi

# ---- 1. the suite ------------------------------------------------------------
SRC_INFO=$(bash "$ROOT/llvm-patches/fetch-source.sh") || die "cannot get LLVM's source"
SRC_VER=$(sed -n 's/^SRC_VER=//p' <<<"$SRC_INFO")
DSC=$(sed -n 's/^DSC=//p' <<<"$SRC_INFO")
bash "$ROOT/llvm-patches/fetch-source.sh" --unpack "$OUT/src" openmp/libomptarget/test \
  openmp/libomptarget/CMakeLists.txt >/dev/null || die "cannot unpack openmp/libomptarget/test"
SUITE=$OUT/src/openmp/libomptarget/test
ALL_TARGETS=$(sed -n 's/^set *(LIBOMPTARGET_ALL_TARGETS "${LIBOMPTARGET_ALL_TARGETS} \([^"]*\)")$/\1/p' \
  "$OUT/src/openmp/libomptarget/CMakeLists.txt" | tr '\n' ' ')
[[ $ALL_TARGETS == *x86_64-pc-linux-gnu* ]] || die "no LIBOMPTARGET_ALL_TARGETS in openmp/libomptarget/CMakeLists.txt"

# ---- 2. site configs -----------------------------------------------------------
pyq() { python3 -c 'import sys; print(repr(sys.argv[1]))' "$1"; }
write_site() { # <mode> <exec dir> [probe dir]
  mkdir -p "$2"
  {
    echo "# Written by tests/conformance/run.sh: do not edit."
    echo "config.conformance_mode = $(pyq "$1")"
    echo "config.conformance_exec_root = $(pyq "$2")"
    echo "config.conformance_suite_dir = $(pyq "$SUITE")"
    echo "config.conformance_all_targets = $(pyq "$ALL_TARGETS").split()"
    echo "config.conformance_llvm_dir = $(pyq "$LLVM")"
    echo "config.conformance_ompdpu = $(pyq "$OMPDPU")"
    echo "config.conformance_emulate = $EMULATE"
    echo "config.conformance_timeout = $TIMEOUT"
    [[ -n ${3:-} ]] && echo "config.conformance_probe_dir = $(pyq "$3")"
    echo "lit_config.load_config(config, $(pyq "$HERE/site_config.py"))"
  } >"$2/lit.site.cfg"
}
write_site host "$OUT/host"
write_site ompdpu "$OUT/ompdpu"
write_site ompdpu "$OUT/probe" "$HERE/probe"

# Skipped tests are not run with ompdpu.
SKIPPED=$HERE/skipped.txt
skip_re=$(sed -n 's/^\([^#: ][^:]*\):.*/\1/p' "$SKIPPED" | sed 's/[.[\*^$()+?{|]/\\&/g' | paste -sd'|')

run_lit() { # <label> <json> <log> <lit args...>
  local label=$1 json=$2 logf=$3 start end
  shift 3
  start=$(date +%s)
  log "$label: lit -j$JOBS --timeout $TIMEOUT ($(basename "$logf"))"
  "$PY" "$LIT" -v -j"$JOBS" --timeout "$TIMEOUT" --no-progress-bar -o "$json" "$@" >"$logf" 2>&1 || true
  end=$(date +%s)
  [[ -s $json ]] || { tail -n 20 "$logf" >&2; die "$label: lit wrote no results (log: $logf)"; }
  ((VERBOSE || ${#TESTS[@]})) && cat "$logf" >&2
  log "$label: $((end - start)) s"
}

# ---- one test or a few: both ways, no cache ---------------------------------
if ((${#TESTS[@]})); then
  host_paths=() dpu_paths=()
  for t in "${TESTS[@]}"; do
    t=${t#"$SUITE"/}
    [[ -f $SUITE/$t ]] || die "no test $t in $SUITE"
    host_paths+=("$OUT/host/$t")
    dpu_paths+=("$OUT/ompdpu/$t")
  done
  run_lit "host plugin" "$OUT/one-host.json" "$OUT/one-host.log" -a "${host_paths[@]}"
  run_lit "ompdpu" "$OUT/one-ompdpu.json" "$OUT/one-ompdpu.log" -a "${dpu_paths[@]}"
  exec python3 "$HERE/compare.py" --host "$OUT/one-host.json" --ompdpu "$OUT/one-ompdpu.json" \
    --skipped "$SKIPPED" --suite "$SUITE"
fi

# ---- 3. baseline: LLVM's host plugin (cached) ---------------------------------
key_inputs() {
  echo "$SRC_VER $(sha256sum "$DSC" | cut -d' ' -f1)"
  "$LLVM/bin/clang" --version | head -n 1
  dpkg-query -W -f='${Package} ${Version}\n' clang-14 libclang-common-14-dev libomp5-14 \
    libomp-14-dev llvm-14-tools libc6-dev 2>/dev/null || true
  sha256sum "$LLVM"/lib/libomptarget.so "$LLVM"/lib/libomptarget.rtl.x86_64.so "$LLVM"/lib/libomp.so
  cat "$HERE/site_config.py" "$0"
  echo "timeout $TIMEOUT jobs $JOBS $("$PY" "$LIT" --version 2>&1)"
}
KEY=$(key_inputs | sha256sum | cut -c1-16)
BASE=$CACHE/host-$KEY.json
mkdir -p "$CACHE"
if ((!REBASELINE)) && [[ -s $BASE ]]; then
  log "host plugin: cached baseline $BASE"
else
  run_lit "host plugin" "$OUT/host.json" "$OUT/host.log" "$OUT/host"
  cp "$OUT/host.json" "$BASE.tmp" && mv "$BASE.tmp" "$BASE"
  cp "$OUT/host.log" "$CACHE/host-$KEY.log"
fi

# ---- 4. ompdpu ------------------------------------------------------------------
filter=()
[[ -n $skip_re ]] && filter=(--filter-out "($skip_re)")
run_lit "ompdpu" "$OUT/ompdpu.json" "$OUT/ompdpu.log" "${filter[@]}" "$OUT/ompdpu"
run_lit "probe" "$OUT/probe.json" "$OUT/probe.log" "$OUT/probe"

# ---- 5. compare -------------------------------------------------------------------
log "logs: $OUT/ompdpu.log, $CACHE/host-$KEY.log"
python3 "$HERE/compare.py" --host "$BASE" --ompdpu "$OUT/ompdpu.json" --probe "$OUT/probe.json" \
  --skipped "$SKIPPED" --suite "$SUITE"
