#!/usr/bin/env bash
# LLVM's own libomptarget test suite against ompdpu (ctest label conformance).
#
#   tests/conformance/run.sh [--build DIR] [--llvm N] [--rebaseline] [-v] [TEST...]
#
# --llvm N (14, default; 15 to 19): that LLVM version's suite, clang, libomp and
# host plugin. 14 is the installed LLVM; 15 and 16 are unpacked from Debian 12's
# packages and 19 is Debian 12's clang-19 with its libomp unpacked and ompdpu's
# rebuilt libomptarget 19 (tests/llvm-versions/run.sh --print-toolchain N); 17
# and 18 are Debian 13's packages, so lit and every program run inside the
# Debian 13 root (scripts/debian13-root.sh, the clone and the build tree bound
# at their own paths) with its lit, FileCheck and not (17's), and the suite
# comes from Debian 13's source of that version. The suite
# is openmp/libomptarget/test, offload/test from 19 on; the skip list skipped.txt
# (14) or skipped-N.txt; results under <build>/tests/conformance (14) or
# <build>/tests/conformance/llvmN.
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
MAJOR=14
VERBOSE=0
TESTS=()
while (($#)); do
  case $1 in
  --build) BUILD=$2; shift ;;
  --build=*) BUILD=${1#*=} ;;
  --llvm) MAJOR=${2:-}; shift ;;
  --llvm=*) MAJOR=${1#*=} ;;
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
# FileCheck, not and lit: LLVM 14's for every version.
TOOLS=/usr/lib/llvm-14/bin
LIT=/usr/lib/llvm-14/build/utils/lit/lit.py
SUBTREE=openmp/libomptarget
SKIPPED=$HERE/skipped.txt
IN_ROOT=() # the prefix that runs a command where this LLVM runs (17, 18: the Debian 13 root)
SYSROOT=   # that root as seen from here
LIB_PATH= # LD_LIBRARY_PATH of the programs (17, 18: see site_config.py)
PY=
case $MAJOR in
14) LLVM_BIN=/usr/lib/llvm-14/bin LLVM_LIB=/usr/lib/llvm-14/lib ;;
15 | 16 | 19)
  OUT=$OUT/llvm$MAJOR
  SKIPPED=$HERE/skipped-$MAJOR.txt
  TC=$(bash "$ROOT/tests/llvm-versions/run.sh" --build "$BUILD" --print-toolchain "$MAJOR") ||
    die "cannot get the LLVM $MAJOR toolchain (tests/llvm-versions/run.sh --print-toolchain $MAJOR)"
  LLVM_LIB=$TC/lib LLVM_BIN=$TC/bin
  if ((MAJOR >= 19)); then
    SUBTREE=offload
    LLVM_BIN=/usr/lib/llvm-$MAJOR/bin # Debian 12's clang-19; libomp unpacked beside
    # The source build-libomptarget-19.sh has fetched.
    export OMPDPU_LLVM_SRC_CACHE=${OMPDPU_LLVM_SRC_CACHE:-$(realpath -m "${OMPDPU_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ompdpu}")/llvm-src/$MAJOR}
  fi ;;
17 | 18)
  OUT=$OUT/llvm$MAJOR
  SKIPPED=$HERE/skipped-$MAJOR.txt
  SYSROOT=$(bash "$ROOT/scripts/debian13-root.sh" --path) || die "cannot make the Debian 13 root"
  IN_ROOT=(bash "$ROOT/scripts/debian13-root.sh" --bind "$ROOT" --bind "$BUILD" --)
  LLVM_BIN=/usr/lib/llvm-$MAJOR/bin LLVM_LIB=/usr/lib/llvm-17/lib
  # libomp 18 conflicts with 17's: it is unpacked beside, in /opt/libomp-18.
  ((MAJOR == 18)) && LLVM_LIB=/opt/libomp-18/usr/lib/llvm-18/lib
  LIB_PATH=$LLVM_LIB
  TOOLS=/usr/lib/llvm-17/bin
  LIT=/usr/lib/llvm-17/build/utils/lit/lit.py
  PY=/usr/bin/python3 # trixie's, with python3-psutil
  # Trixie's source of the version installed in that root.
  export OMPDPU_LLVM_ROOT_FS=$SYSROOT
  export OMPDPU_LLVM_SRC_CACHE=${OMPDPU_LLVM_SRC_CACHE:-$(realpath -m "${OMPDPU_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ompdpu}")/llvm-src/$MAJOR}
  ;;
*) die "--llvm: $MAJOR is not one of 14 to 19" ;;
esac
export OMPDPU_LLVM_MAJOR=$MAJOR
OMPDPU=$BUILD/bin/ompdpu
TIMEOUT=${OMPDPU_CONFORMANCE_TIMEOUT:-120}
JOBS=${OMPDPU_CONFORMANCE_JOBS:-2}
EMULATE=2
CACHE=$(realpath -m "${OMPDPU_CONFORMANCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ompdpu/conformance}")
[[ -x $OMPDPU && -x $BUILD/bin/ompdpu-server ]] || die "$OMPDPU or ompdpu-server is missing: build first"
[[ -f $SYSROOT$LIT ]] || die "$SYSROOT$LIT is missing (llvm-14-tools)"
for t in "$LLVM_BIN/clang" "$LLVM_BIN/clang++" "$TOOLS/FileCheck" "$TOOLS/not"; do
  [[ -x $SYSROOT$t ]] || die "$SYSROOT$t is missing"
done
# LLVM's host plugin: a library of its own up to 18, inside libomptarget from 19.
if ((MAJOR >= 19)); then
  HOST_PLUGIN=$LLVM_LIB/libomptarget.so.$MAJOR.1
else
  HOST_PLUGIN=$LLVM_LIB/libomptarget.rtl.x86_64.so
fi
[[ -e $SYSROOT$HOST_PLUGIN ]] || die "LLVM's host plugin $SYSROOT$HOST_PLUGIN is missing"
if [[ -n $PY ]]; then
  :
elif PY=python3 && /usr/bin/python3 -c 'import psutil' 2>/dev/null; then
  PY=/usr/bin/python3
elif ! python3 -c 'import psutil' 2>/dev/null; then
  log "no python3 with psutil (apt-get install python3-psutil): runs wrapped in \`timeout $TIMEOUT\`"
fi

# ---- 1. the suite ------------------------------------------------------------
SRC_INFO=$(bash "$ROOT/llvm-patches/fetch-source.sh") || die "cannot get LLVM's source"
SRC_VER=$(sed -n 's/^SRC_VER=//p' <<<"$SRC_INFO")
DSC=$(sed -n 's/^DSC=//p' <<<"$SRC_INFO")
bash "$ROOT/llvm-patches/fetch-source.sh" --unpack "$OUT/src" $SUBTREE/test \
  $SUBTREE/CMakeLists.txt >/dev/null || die "cannot unpack $SUBTREE/test"
SUITE=$OUT/src/$SUBTREE/test
ALL_TARGETS=$(sed -n 's/^set *(LIBOMPTARGET_ALL_TARGETS "${LIBOMPTARGET_ALL_TARGETS} \([^"]*\)")$/\1/p' \
  "$OUT/src/$SUBTREE/CMakeLists.txt" | tr '\n' ' ')
[[ $ALL_TARGETS == *x86_64-pc-linux-gnu* ]] || die "no LIBOMPTARGET_ALL_TARGETS in $SUBTREE/CMakeLists.txt"

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
    echo "config.conformance_llvm_bin = $(pyq "$LLVM_BIN")"
    echo "config.conformance_llvm_lib = $(pyq "$LLVM_LIB")"
    echo "config.conformance_tools_dir = $(pyq "$TOOLS")"
    echo "config.conformance_ompdpu = $(pyq "$OMPDPU")"
    echo "config.conformance_emulate = $EMULATE"
    echo "config.conformance_timeout = $TIMEOUT"
    [[ -n ${3:-} ]] && echo "config.conformance_probe_dir = $(pyq "$3")"
    [[ -n $LIB_PATH ]] && echo "config.conformance_library_path = $(pyq "$LIB_PATH")"
    echo "lit_config.load_config(config, $(pyq "$HERE/site_config.py"))"
  } >"$2/lit.site.cfg"
}
write_site host "$OUT/host"
write_site ompdpu "$OUT/ompdpu"
write_site ompdpu "$OUT/probe" "$HERE/probe"

# Skipped tests are not run with ompdpu.
[[ -f $SKIPPED ]] || die "no $SKIPPED"
skip_re=$(sed -n 's/^\([^#: ][^:]*\):.*/\1/p' "$SKIPPED" | sed 's/[.[\*^$()+?{|]/\\&/g' | paste -sd'|')

run_lit() { # <label> <json> <log> <lit args...>
  local label=$1 json=$2 logf=$3 start end
  shift 3
  start=$(date +%s)
  log "$label: lit -j$JOBS --timeout $TIMEOUT ($(basename "$logf"))"
"${IN_ROOT[@]}" "$PY" "$LIT" -v -j"$JOBS" --timeout "$TIMEOUT" --no-progress-bar -o "$json" "$@" >"$logf" 2>&1 || true
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
  "${IN_ROOT[@]}" "$LLVM_BIN/clang" --version | head -n 1
  "${IN_ROOT[@]}" dpkg-query -W -f='${Package} ${Version}\n' clang-$MAJOR libclang-common-$MAJOR-dev \
    libomp5-$MAJOR libomp5-${MAJOR}t64 libomp-$MAJOR-dev llvm-14-tools llvm-17-tools libc6-dev 2>/dev/null || true
  cat "$SYSROOT$LLVM_LIB/../../../../.ompdpu-packages" 2>/dev/null || true
  # Inside the root for 17 and 18: its libraries' symbolic links are absolute there.
  "${IN_ROOT[@]}" sh -c 'sha256sum "$(realpath "$1")" "$2" "$(realpath "$3")"' sh \
    "$LLVM_LIB/libomptarget.so" "$HOST_PLUGIN" "$LLVM_LIB/libomp.so"
  cat "$HERE/site_config.py" "$0"
  echo "timeout $TIMEOUT jobs $JOBS $("$PY" "$LIT" --version 2>&1)"
}
KEY=$(key_inputs | sha256sum | cut -c1-16)
BASE=$CACHE/host-$MAJOR-$KEY.json
((MAJOR == 14)) && BASE=$CACHE/host-$KEY.json
mkdir -p "$CACHE"
if ((!REBASELINE)) && [[ -s $BASE ]]; then
  log "host plugin: cached baseline $BASE"
else
  run_lit "host plugin" "$OUT/host.json" "$OUT/host.log" "$OUT/host"
  cp "$OUT/host.json" "$BASE.tmp" && mv "$BASE.tmp" "$BASE"
  cp "$OUT/host.log" "${BASE%.json}.log"
fi

# ---- 4. ompdpu ------------------------------------------------------------------
filter=()
[[ -n $skip_re ]] && filter=(--filter-out "($skip_re)")
run_lit "ompdpu" "$OUT/ompdpu.json" "$OUT/ompdpu.log" "${filter[@]}" "$OUT/ompdpu"
run_lit "probe" "$OUT/probe.json" "$OUT/probe.log" "$OUT/probe"

# ---- 5. compare -------------------------------------------------------------------
log "logs: $OUT/ompdpu.log, ${BASE%.json}.log"
python3 "$HERE/compare.py" --host "$BASE" --ompdpu "$OUT/ompdpu.json" --probe "$OUT/probe.json" \
  --skipped "$SKIPPED" --suite "$SUITE"
