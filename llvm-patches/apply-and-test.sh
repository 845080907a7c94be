#!/usr/bin/env bash
# Apply llvm-patches/ to the source of the installed LLVM's libomptarget, build
# libomptarget.so with and without them, and test the patched one.
#
#   llvm-patches/apply-and-test.sh [--build-only] [--bench]
#
# 1. Fetches the Debian source package the installed libomptarget was built
#    from, or reuses the checked copy: llvm-patches/fetch-source.sh (the exact
#    installed version, with apt's checks; kept in $OMPDPU_LLVM_SRC_CACHE,
#    default ${XDG_CACHE_HOME:-~/.cache}/ompdpu/llvm-src, outside the clone).
# 2. Unpacks openmp/libomptarget only, applies every patch of
#    llvm-patches/libomptarget-<major>/ in name order (`patch -p1`, a patch
#    that does not apply is an error), and builds libomptarget.so twice with
#    the same compiler and flags: <build>/llvm-patches/stock/ (the source as
#    Debian built it: its own patches only touch CMake files there, so this is
#    the installed library's code) and <build>/llvm-patches/patched/.
# 3. Tests (skipped with --build-only): the lit end-to-end suite
#    (tests/lit/offload) with the patched libomptarget.so first on the library
#    path of every program; libomptarget_override.c checks that it is the one
#    loaded, libomptarget_info.c that LIBOMPTARGET_INFO still works.
# 4. With --bench: the empty region and the 8-small-maps region of
#    ompdpu-offload-micro, stock and patched in turns, medians of 5 turns.
#
# Environment: OMPDPU_BUILD (build directory, default build),
# OMPDPU_LLVM_SRC_CACHE (where the source package is kept, see fetch-source.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=$(realpath -m "${OMPDPU_BUILD:-build}")
OUT=$BUILD/llvm-patches
BUILD_ONLY=0
BENCH=0
for a in "$@"; do
  case $a in
  --build-only) BUILD_ONLY=1 ;;
  --bench) BENCH=1 ;;
  -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  *) echo "llvm-patches: unknown argument '$a' (see --help)" >&2; exit 2 ;;
  esac
done
log() { echo "[llvm-patches] $*" >&2; }
die() { echo "llvm-patches: error: $*" >&2; exit 1; }

# ---- 1. the source: the package the installed libomptarget comes from -------
MAJOR=14
INSTALLED=/usr/lib/llvm-$MAJOR/lib/libomptarget.so
[[ -e $INSTALLED ]] || die "$INSTALLED is missing: is libomp-$MAJOR-dev installed?"
PATCHES=("$ROOT"/llvm-patches/libomptarget-$MAJOR/*.patch)
[[ -e ${PATCHES[0]} ]] || die "no patches in llvm-patches/libomptarget-$MAJOR/"
FETCH=$ROOT/llvm-patches/fetch-source.sh
SRC_INFO=$(OMPDPU_LLVM_MAJOR=$MAJOR bash "$FETCH") || die "cannot get the LLVM source"
SRC_VER=$(sed -n 's/^SRC_VER=//p' <<<"$SRC_INFO")
log "source: $(sed -n 's/^SRC_PKG=//p' <<<"$SRC_INFO") $SRC_VER"

# ---- 2. unpack, patch, build ------------------------------------------------
CXX=${CXX:-clang++-$MAJOR}
command -v "$CXX" >/dev/null || die "$CXX not found"
# libomptarget's own sources, built the way its CMake builds them (no debug
# output, no profiling: like Debian's package), as one shared library. The
# installed one finds its plugins through RUNPATH $ORIGIN; these copies live
# elsewhere and look in the install's lib directory instead, so that they
# see the same plugins (after any on LD_LIBRARY_PATH, as the stock one does).
build_lib() { # <source dir holding openmp/> <output dir>
  local lt=$1/openmp/libomptarget
  mkdir -p "$2"
  "$CXX" -O2 -DNDEBUG -fPIC -shared -std=c++14 -I"$lt/include" -I"$lt/src" "$lt"/src/*.cpp \
    -ldl -Wl,--version-script="$lt/src/exports" -Wl,-soname,libomptarget.so \
    -Wl,--enable-new-dtags,-rpath,"$(dirname "$INSTALLED")" \
    -o "$2/libomptarget.so.tmp" || die "cannot build $2/libomptarget.so"
  mv "$2/libomptarget.so.tmp" "$2/libomptarget.so"
}
# Both libraries are rebuilt only when what they are built from changed: the
# source version, a patch (or the set of patches), this script, the compiler
# (scripts/test.sh builds them, scripts/bench.sh then finds them up to date).
STAMP="$SRC_VER $CXX $(cat "${PATCHES[@]}" "$0" "$FETCH" | sha256sum | cut -d' ' -f1) ${PATCHES[*]##*/}"
up_to_date() {
  [[ -e $OUT/stock/libomptarget.so && -e $OUT/patched/libomptarget.so &&
    $(cat "$OUT/build.stamp" 2>/dev/null) == "$STAMP" ]]
}
if up_to_date; then
  log "stock and patched libomptarget.so are up to date in $OUT"
else
  rm -rf "$OUT/tree-stock" "$OUT/tree-patched" "$OUT/build.stamp"
  OMPDPU_LLVM_MAJOR=$MAJOR bash "$FETCH" --unpack "$OUT/tree-stock" openmp/libomptarget/src \
    openmp/libomptarget/include >/dev/null || die "cannot unpack openmp/libomptarget"
  cp -r "$OUT/tree-stock" "$OUT/tree-patched"
  for p in "${PATCHES[@]}"; do
    log "applying $(basename "$p")"
    patch -d "$OUT/tree-patched" -p1 --forward --batch --quiet <"$p" ||
      die "$(basename "$p") does not apply to LLVM $SRC_VER"
  done
  log "building stock and patched libomptarget.so with $CXX"
  build_lib "$OUT/tree-stock" "$OUT/stock" &
  build_lib "$OUT/tree-patched" "$OUT/patched"
  wait $! || die "cannot build the stock libomptarget.so"
  echo "$STAMP" >"$OUT/build.stamp"
fi
# The unpatched build must offer exactly what the installed library offers.
exports() { nm -D --defined-only "$1" | awk '{print $3}' | sort; }
diff <(exports "$INSTALLED") <(exports "$OUT/stock/libomptarget.so") >/dev/null ||
  die "the unpatched build exports other symbols than $INSTALLED: not the same source?"
log "stock: $OUT/stock/libomptarget.so, patched: $OUT/patched/libomptarget.so"
((BUILD_ONLY)) && exit 0

# ---- 3. test the patched library --------------------------------------------
[[ -x $BUILD/bin/ompdpu ]] || die "$BUILD/bin/ompdpu is missing: build ompdpu first (scripts/test.sh)"
LIT=/usr/lib/llvm-$MAJOR/build/utils/lit/lit.py
[[ -f $LIT ]] || die "$LIT is missing (llvm-$MAJOR-tools)"
log "lit end-to-end suite against the patched libomptarget"
PY=python3
/usr/bin/python3 -c 'import psutil' 2>/dev/null && PY=/usr/bin/python3
lit_out=$OUT/lit-patched.log
"$PY" "$LIT" -v -j2 --param "libomptarget_dir=$OUT/patched" "$BUILD/tests/lit/offload" \
  >"$lit_out" 2>&1 || true
grep -E '^(FAIL|XPASS|UNRESOLVED|TIMEOUT):|^  (Passed|Failed|Unsupported|Unresolved|Timed Out) *:' "$lit_out" >&2 || true
grep -qE '^(FAIL|XPASS|UNRESOLVED|TIMEOUT):' "$lit_out" &&
  die "lit tests failed with the patched libomptarget (log: $lit_out)"
grep -q '^PASS: .*libomptarget_override.c' "$lit_out" ||
  die "libomptarget_override.c did not pass: the patched library may not be the one tested (log: $lit_out)"
grep -q '^PASS: .*libomptarget_info.c' "$lit_out" ||
  die "libomptarget_info.c did not pass with the patched library (log: $lit_out)"
log "the patched libomptarget passes the end-to-end suite"

# ---- 4. optional: how much the patches save ---------------------------------
if ((BENCH)); then
  micro=$BUILD/bin/ompdpu-offload-micro
  [[ -x $micro ]] || die "$micro is missing"
  declare -A samples
  for turn in 1 2 3 4 5; do
    for lib in stock patched; do
      while read -r name value; do
        samples[$lib.$name]+="$value "
      done < <(LD_LIBRARY_PATH=$OUT/$lib OMP_TARGET_OFFLOAD=mandatory \
        "$BUILD/bin/ompdpu" run --emulate 1 --pin -- "$micro" all --quick \
        --benchmark_filter='launch_empty_sync|small_maps' --benchmark_format=json 2>/dev/null |
        python3 -c 'import json,sys
for b in json.load(sys.stdin)["benchmarks"]:
    if b.get("aggregate_name") == "median":
        print(b["run_name"].split("/")[0], b["real_time"] * {"ns": 1e-3, "us": 1, "ms": 1e3}[b["time_unit"]])')
    done
  done
  med() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
  printf '%-28s %10s %10s %8s\n' "region (us, median of 5)" stock patched ratio
  for name in launch_empty_sync small_maps_8x64B; do
    s=$(echo "${samples[stock.$name]:-}" | med)
    p=$(echo "${samples[patched.$name]:-}" | med)
    [[ -n $s && -n $p ]] || die "no measurement of $name"
    printf '%-28s %10.3f %10.3f %8.3f\n' "$name" "$s" "$p" "$(awk -v p="$p" -v s="$s" 'BEGIN {print p / s}')"
  done
fi
