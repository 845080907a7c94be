#!/usr/bin/env bash
# Build libomptarget 19 with ompdpu's DPU plugin inside it, from Debian 12's
# llvm-toolchain-19 source, and put it where `ompdpu run` finds it.
#
#   llvm-patches/build-libomptarget-19.sh [--build DIR]
#
# LLVM 19 links its plugins into libomptarget.so: the plugin
# (llvm-patches/libomptarget-19/plugins-nextgen/dpu, which compiles
# plugin-dpu/abi/nextgen and abi/common, LLVM's generic plugin types over
# plugin-dpu/src) goes into offload/plugins-nextgen/, and only the
# offload/ runtime is built, standalone against the installed llvm-19-dev and
# clang-19, with the plugins dpu and host (in that order: DPUs are the first
# OpenMP devices, the host plugin's follow), after the patches of
# llvm-patches/libomptarget-19/*.patch. The source is fetched and checked
# by fetch-source.sh (llvm-toolchain-19, the version apt offers); libomp 19
# (conflicting with 14's libomp-dev) is unpacked privately. The build tree is
# cached in $OMPDPU_CACHE/llvm-19/<key>, keyed by the patches, the source
# version, the compiler and the configuration; a change of the plugin's files
# (here or in plugin-dpu/abi) recompiles them, one of ompdpu's device libraries only relinks. Result: <build>/lib/ompdpu/llvm19/libomptarget.so.19.1.
#
# Needs: clang-19 llvm-19-dev libzstd-dev (apt-get install
# --no-install-recommends; LLVM's CMake files need zstd's), an
# ompdpu build (<build>/lib/libompdpu_*.a). Environment: OMPDPU_BUILD,
# OMPDPU_CACHE (default ${XDG_CACHE_HOME:-~/.cache}/ompdpu),
# OMPDPU_LLVM_SRC_CACHE (default $OMPDPU_CACHE/llvm-src/19), JOBS (2).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(realpath -m "${OMPDPU_BUILD:-$ROOT/build}")
while (($#)); do
  case $1 in
  --build) BUILD=$(realpath -m "${2:?--build needs a directory}"); shift 2 ;;
  -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  *) echo "build-libomptarget-19: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
log() { echo "[libomptarget-19] $*" >&2; }
die() { echo "build-libomptarget-19: error: $*" >&2; exit 1; }
CACHE=$(realpath -m "${OMPDPU_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ompdpu}")
export OMPDPU_LLVM_SRC_CACHE=${OMPDPU_LLVM_SRC_CACHE:-$CACHE/llvm-src/19}
export OMPDPU_LLVM_MAJOR=19
LLVM=/usr/lib/llvm-19
PLUGIN=$ROOT/llvm-patches/libomptarget-19/plugins-nextgen/dpu
OUT=$BUILD/lib/ompdpu/llvm19

[[ -f $LLVM/lib/cmake/llvm/LLVMConfig.cmake && -x /usr/bin/clang++-19 && -f /usr/include/zstd.h ]] ||
  die "needs clang-19, llvm-19-dev and libzstd-dev: apt-get install --no-install-recommends clang-19 llvm-19-dev libzstd-dev"
for lib in plugin_core client auth transport common; do
  [[ -f $BUILD/lib/libompdpu_$lib.a ]] || die "no $BUILD/lib/libompdpu_$lib.a: build ompdpu first"
done

# libomp 19 (omp.h, omp-tools.h, libomp.so): its packages, unpacked.
OMP=$CACHE/llvm-19/root
if [[ ! -f $OMP/usr/lib/llvm-19/lib/libomp.so ]]; then
  log "unpacking libomp5-19 and libomp-19-dev into $OMP"
  mkdir -p "$CACHE/llvm-19/debs"
  (cd "$CACHE/llvm-19/debs" && apt-get download -qq libomp5-19 libomp-19-dev) >&2 ||
    die "cannot download libomp5-19 libomp-19-dev"
  for deb in "$CACHE"/llvm-19/debs/*.deb; do dpkg -x "$deb" "$OMP"; done
fi
OMPINC=$OMP/usr/lib/llvm-19/lib/clang/19/include

SRC_INFO=$(bash "$ROOT/llvm-patches/fetch-source.sh") || die "cannot get the LLVM 19 source"
SRC_VER=$(sed -n 's/^SRC_VER=//p' <<<"$SRC_INFO")
CMAKE_ARGS=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=clang-19
  -DCMAKE_CXX_COMPILER=clang++-19 -DLLVM_DIR=$LLVM/lib/cmake/llvm
  -DLIBOMPTARGET_LLVM_INCLUDE_DIRS=$LLVM/include -DLIBOMPTARGET_PLUGINS_TO_BUILD="dpu;host"
  -DLIBOMPTARGET_BUILD_DEVICERTL_BCLIB=OFF -DLIBOMP_STANDALONE=$OMP/usr/lib/llvm-19/lib/libomp.so
  -DLIBOMP_INCLUDE_DIR=$OMPINC -DLIBOMP_OMP_TOOLS_INCLUDE_DIR=$OMPINC
  -DOMPDPU_SOURCE_DIR="$ROOT" -DOMPDPU_BUILD_DIR="$BUILD"
  -DCMAKE_PROJECT_INCLUDE="$ROOT/llvm-patches/libomptarget-19/standalone.cmake"
  -DCMAKE_DISABLE_FIND_PACKAGE_FFI=ON -DLIBOMP_HAVE_VERSION_SCRIPT_FLAG=ON)
# The version script's check needs openmp/runtime, which is not unpacked: say
# the linker has it (the exports, VERS1.0, are what programs link against).
# No libffi at build time: the host plugin then loads it with dlopen, as
# Debian's does (Debian 12's static libffi.a is not built for shared objects).
PATCHES=("$ROOT"/llvm-patches/libomptarget-19/*.patch)
# The tree is keyed by what a change of needs a fresh configure: the source,
# the compiler, the patches, the configuration. The plugin's own files are
# copied in when they changed, and ninja rebuilds what depends on them.
KEY=$( (echo "$SRC_VER"; clang++-19 --version | head -n 1; echo "${CMAKE_ARGS[*]}"
  cat "${PATCHES[@]}" "$ROOT/llvm-patches/libomptarget-19/standalone.cmake") | sha256sum | cut -c1-16)
WORK=$CACHE/llvm-19/$KEY
log "llvm-toolchain-19 $SRC_VER, patches and configuration $KEY: $WORK"
if [[ ! -f $WORK/src/.ompdpu-patched ]]; then
  rm -rf "$WORK"
  bash "$ROOT/llvm-patches/fetch-source.sh" --unpack "$WORK/src" offload cmake >/dev/null ||
    die "cannot unpack offload/ from the LLVM 19 source"
  for p in "${PATCHES[@]}"; do
    log "applying $(basename "$p")"
    patch -d "$WORK/src" -p1 --forward --batch --quiet <"$p" ||
      die "$(basename "$p") does not apply to LLVM $SRC_VER"
  done
  touch "$WORK/src/.ompdpu-patched"
fi
dst=$WORK/src/offload/plugins-nextgen/dpu
(cd "$PLUGIN" && find . -type f) | while read -r f; do
  cmp -s "$PLUGIN/$f" "$dst/$f" || { mkdir -p "$(dirname "$dst/$f")" && cp "$PLUGIN/$f" "$dst/$f"; }
done
if [[ ! -f $WORK/build/build.ninja ]]; then
  log "configuring offload/ (plugins dpu, host)"
  nice -n 10 cmake -S "$WORK/src/offload" -B "$WORK/build" "${CMAKE_ARGS[@]}" \
    >"$WORK/configure.log" 2>&1 || die "cmake failed (log: $WORK/configure.log)"
fi
start=$SECONDS
log "building libomptarget (ninja -j${JOBS:-2})"
nice -n 10 ninja -C "$WORK/build" -j"${JOBS:-2}" omptarget >"$WORK/build.log" 2>&1 ||
  die "the build failed (log: $WORK/build.log)"
log "built in $((SECONDS - start)) s"
LIB=$(cd "$WORK/build" && ls libomptarget.so.19.* | head -n 1)
[[ -n $LIB ]] || die "no libomptarget.so.19* in $WORK/build"
# Only the versioned file: `ompdpu run` puts this directory on every
# program's path, and an unversioned libomptarget.so would shadow LLVM 14's.
mkdir -p "$OUT"
rm -f "$OUT"/libomptarget.so*
cp "$WORK/build/$LIB" "$OUT/"
log "$OUT/$LIB"
