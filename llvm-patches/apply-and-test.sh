#!/usr/bin/env bash
# Apply llvm-patches/ to the source of the installed LLVM's libomptarget, build
# libomptarget.so with and without them, and test the patched one.
#
#   llvm-patches/apply-and-test.sh [--build-only] [--bench]
#
# 1. Fetches the Debian source package the installed libomptarget was built
#    from (`apt-get source --download-only`, the exact installed version, with
#    apt's signature and checksum checks; deb-src entries are derived from the
#    machine's deb entries into a private apt state, nothing system-wide
#    changes). Kept in $OMPDPU_LLVM_SRC_CACHE (default: <build>/llvm-patches/
#    src) and checked against the .dsc's SHA-256 when reused.
# 2. Unpacks openmp/libomptarget only, applies every patch of
#    llvm-patches/libomptarget-<major>/ in name order (`patch -p1`, a patch
#    that does not apply is an error), and builds libomptarget.so twice with
#    the same compiler and flags: <build>/llvm-patches/stock/ (the unpatched
#    source, identical to the installed library's code: Debian's own patches
#    only touch CMake files there) and <build>/llvm-patches/patched/.
# 3. Tests (skipped with --build-only): the lit end-to-end suite
#    (tests/lit/offload) with the patched libomptarget.so first on the library
#    path of every program; libomptarget_override.c checks that it is the one
#    loaded, libomptarget_info.c that LIBOMPTARGET_INFO still works.
# 4. With --bench: the empty region and the 8-small-maps region of
#    ompdpu-offload-micro, stock and patched in turns, medians of 5 turns.
#
# Environment: OMPDPU_BUILD (build directory, default build),
# OMPDPU_LLVM_SRC_CACHE (where the source package is kept).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=$(realpath -m "${OMPDPU_BUILD:-build}")
OUT=$BUILD/llvm-patches
CACHE=$(realpath -m "${OMPDPU_LLVM_SRC_CACHE:-$OUT/src}")
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

# ---- which source: the package the installed libomptarget comes from ------
MAJOR=14
BIN_PKG=libomp5-$MAJOR
read -r SRC_PKG SRC_VER < <(dpkg-query -W -f='${source:Package} ${source:Version}\n' "$BIN_PKG" 2>/dev/null) ||
  die "$BIN_PKG is not installed (scripts/install-deps.sh installs it)"
INSTALLED=/usr/lib/llvm-$MAJOR/lib/libomptarget.so
[[ -e $INSTALLED ]] || die "$INSTALLED is missing: is libomp-$MAJOR-dev installed?"
PATCHES=("$ROOT"/llvm-patches/libomptarget-$MAJOR/*.patch)
[[ -e ${PATCHES[0]} ]] || die "no patches in llvm-patches/libomptarget-$MAJOR/"
UPSTREAM_VER=${SRC_VER#*:}      # drop the epoch
UPSTREAM_VER=${UPSTREAM_VER%-*} # and the Debian revision
DSC=$CACHE/${SRC_PKG}_${SRC_VER#*:}.dsc
log "source: $SRC_PKG $SRC_VER (from $BIN_PKG)"

# ---- 1. fetch (or reuse) the source package --------------------------------
verify_cached() {
  [[ -f $DSC ]] || return 1
  # Checksums-Sha256 lines of the .dsc: " <sha256> <size> <file>"
  local ok=1 sum size file
  while read -r sum size file; do
    [[ -f $CACHE/$file ]] || { ok=0; break; }
    echo "$sum  $CACHE/$file" | sha256sum --quiet -c - >/dev/null 2>&1 || { ok=0; break; }
  done < <(awk '/^Checksums-Sha256:/{f=1; next} /^[^ ]/{f=0} f && NF==3' "$DSC")
  ((ok))
}
fetch_source() {
  local apt=$CACHE/apt
  mkdir -p "$apt/lists/partial" "$apt/sources.list.d"
  : >"$apt/sources.list"
  # deb-src twins of the machine's own deb entries (one-line and deb822).
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [[ -f $f ]] && sed -n 's/^deb \(.*\)$/deb-src \1/p' "$f" >>"$apt/sources.list"
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -f $f ]] && sed 's/^Types:.*$/Types: deb-src/' "$f" >"$apt/sources.list.d/$(basename "$f")"
  done
  local opts=(-o "Dir::Etc::sourcelist=$apt/sources.list" -o "Dir::Etc::sourceparts=$apt/sources.list.d"
    -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o "APT::Sandbox::User=root")
  mkdir -p "$apt/cache/archives/partial"
  log "apt-get update (deb-src lists, private to $apt)"
  apt-get "${opts[@]}" update -qq >"$apt/update.log" 2>&1 ||
    log "apt-get update reported errors (see $apt/update.log); trying the download anyway"
  log "apt-get source --download-only $SRC_PKG=$SRC_VER (about 130 MB)"
  (cd "$CACHE" && apt-get "${opts[@]}" source --download-only -qq "$SRC_PKG=$SRC_VER") \
    >"$apt/source.log" 2>&1 ||
    die "cannot download the source of $SRC_PKG $SRC_VER: $(tail -n 3 "$apt/source.log" | tr '\n' ' ')(log: $apt/source.log)"
}
mkdir -p "$CACHE"
if verify_cached; then
  log "using the cached source in $CACHE"
else
  fetch_source
  verify_cached || die "$DSC: the downloaded files do not match their SHA-256 sums"
fi
ORIG=$(ls "$CACHE"/"${SRC_PKG}_${UPSTREAM_VER}".orig.tar.* 2>/dev/null | head -n 1)
[[ -n $ORIG ]] || die "no ${SRC_PKG}_${UPSTREAM_VER}.orig.tar.* in $CACHE"

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
STAMP="$SRC_VER $CXX $(cat "${PATCHES[@]}" "$0" | sha256sum | cut -d' ' -f1) ${PATCHES[*]##*/}"
up_to_date() {
  [[ -e $OUT/stock/libomptarget.so && -e $OUT/patched/libomptarget.so &&
    $(cat "$OUT/build.stamp" 2>/dev/null) == "$STAMP" ]]
}
if up_to_date; then
  log "stock and patched libomptarget.so are up to date in $OUT"
else
  rm -rf "$OUT/tree-stock" "$OUT/tree-patched" "$OUT/build.stamp"
  mkdir -p "$OUT/tree-stock"
  log "unpacking openmp/libomptarget from $(basename "$ORIG")"
  tar -xf "$ORIG" -C "$OUT/tree-stock" --strip-components=1 --wildcards '*/openmp/libomptarget/src/*' \
    '*/openmp/libomptarget/include/*' || die "cannot unpack $ORIG"
  cp -r "$OUT/tree-stock" "$OUT/tree-patched"
  for p in "${PATCHES[@]}"; do
    log "applying $(basename "$p")"
    patch -d "$OUT/tree-patched" -p1 --forward --batch --quiet <"$p" ||
      die "$(basename "$p") does not apply to $SRC_PKG $SRC_VER"
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
