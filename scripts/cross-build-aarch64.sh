#!/usr/bin/env bash
# Cross-build for the real DPU (aarch64) on an x86_64 Debian 12 host, and check the result:
#   1. scripts/arm64-sysroot.sh: cross toolchain + private arm64 sysroot (cached);
#   2. a smoke project (tests/cross/toolchain-smoke) linking UCX, libffi, libelf and OpenMP,
#      then ompdpu-server, cross-built with cmake/aarch64-linux-gnu.cmake and
#      -DOMPDPU_SERVER_ONLY=ON in build-arm64/server;
#   3. one OpenMP offload program, tests/cross/offload_image.c, compiled with
#      -fopenmp-targets=aarch64-unknown-linux-gnu: the host part is x86_64, the embedded
#      device image (a shared object the server dlopens) is extracted from it;
#   4. readelf/file checks that the server and the device image are AArch64 ELF files.
# Prints one PASS/FAIL line per check and a final one; exits non-zero on any failure.
# Nothing is run: qemu-aarch64 user mode hangs on threads here (DESIGN.md).
#
#   scripts/cross-build-aarch64.sh
# Environment: OMPDPU_ARM64_BUILD (default <repo>/build-arm64), OMPDPU_ARM64_SYSROOT
# (default $OMPDPU_ARM64_BUILD/sysroot), JOBS (default 2), CMAKE_BUILD_TYPE (RelWithDebInfo).
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${OMPDPU_ARM64_BUILD:-$REPO/build-arm64}
export OMPDPU_ARM64_SYSROOT=${OMPDPU_ARM64_SYSROOT:-$BUILD/sysroot}
JOBS=${JOBS:-2}
TRIPLE=aarch64-unknown-linux-gnu
log() { printf '[cross-aarch64] %s\n' "$*" >&2; }
failures=()
passes=0
pass() { printf 'PASS: %s\n' "$*"; passes=$((passes + 1)); }
fail() { printf 'FAIL: %s\n' "$*"; failures+=("${1%%:*}"); }

# An ELF file whose e_machine is AArch64 (readelf), cross-checked with file(1).
check_aarch64() {  # name path
  local name=$1 f=$2 machine desc
  if [ ! -f "$f" ]; then fail "$name: $f not found"; return; fi
  machine=$(LC_ALL=C readelf -h "$f" 2>/dev/null | sed -n 's/^ *Machine: *//p')
  desc=$(file -b "$f")
  if [ "$machine" = AArch64 ] && [[ "$desc" == ELF\ 64-bit*ARM\ aarch64* ]]; then
    pass "$name is an AArch64 ELF file: $f ($(LC_ALL=C readelf -h "$f" | sed -n 's/^ *Type: *//p'))"
  else
    fail "$name is not an AArch64 ELF file: $f (readelf Machine: '${machine:-none}'; file: $desc)"
  fi
}

# ---- 1. sysroot ----------------------------------------------------------------------------
t0=$(date +%s)
if ! bash "$REPO/scripts/arm64-sysroot.sh" "$OMPDPU_ARM64_SYSROOT" >/dev/null; then
  echo "FAIL: cross-build-aarch64: scripts/arm64-sysroot.sh failed (see its ERROR above)"
  exit 1
fi
LIBDIR=$OMPDPU_ARM64_SYSROOT/usr/lib/aarch64-linux-gnu
log "sysroot ready in $(( $(date +%s) - t0 )) s: $OMPDPU_ARM64_SYSROOT"

# ---- 2a. the toolchain on its own (tests/cross/toolchain-smoke) ------------------------------
# Tells "toolchain/sysroot broken" apart from "server sources do not build".
SMOKE_BUILD=$BUILD/toolchain-smoke
if cmake -S "$REPO/tests/cross/toolchain-smoke" -B "$SMOKE_BUILD" \
       -DCMAKE_TOOLCHAIN_FILE="$REPO/cmake/aarch64-linux-gnu.cmake" \
       -DOMPDPU_ARM64_SYSROOT="$OMPDPU_ARM64_SYSROOT" >"$BUILD/toolchain-smoke.log" 2>&1 \
   && cmake --build "$SMOKE_BUILD" -j "$JOBS" >>"$BUILD/toolchain-smoke.log" 2>&1; then
  check_aarch64 "toolchain smoke test (UCX+libffi+libelf+OpenMP executable)" "$SMOKE_BUILD/smoke"
else
  tail -n 25 "$BUILD/toolchain-smoke.log" >&2
  fail "toolchain smoke test: configure/build failed (log: $BUILD/toolchain-smoke.log)"
fi

# ---- 2. ompdpu-server ------------------------------------------------------------------------
t1=$(date +%s)
SERVER_BUILD=$BUILD/server
mkdir -p "$SERVER_BUILD"
gen=(); if [ ! -f "$SERVER_BUILD/CMakeCache.txt" ] && command -v ninja >/dev/null; then gen=(-G Ninja); fi
log "configuring $SERVER_BUILD"
if ! cmake -S "$REPO" -B "$SERVER_BUILD" "${gen[@]}" \
       -DCMAKE_TOOLCHAIN_FILE="$REPO/cmake/aarch64-linux-gnu.cmake" \
       -DOMPDPU_ARM64_SYSROOT="$OMPDPU_ARM64_SYSROOT" \
       -DOMPDPU_SERVER_ONLY=ON -DCMAKE_BUILD_TYPE="${CMAKE_BUILD_TYPE:-RelWithDebInfo}" \
       >"$SERVER_BUILD/configure.log" 2>&1; then
  tail -n 25 "$SERVER_BUILD/configure.log" >&2
  fail "ompdpu-server: cmake configure failed (log: $SERVER_BUILD/configure.log)"
else
  log "building ompdpu-server (-j$JOBS)"
  if ! cmake --build "$SERVER_BUILD" --target ompdpu-server -j "$JOBS" >"$SERVER_BUILD/build.log" 2>&1; then
    grep -E 'error|Error|undefined' "$SERVER_BUILD/build.log" | head -n 25 >&2
    fail "ompdpu-server: build failed (log: $SERVER_BUILD/build.log)"
  else
    server=$SERVER_BUILD/bin/ompdpu-server
    [ -f "$server" ] || server=$(find "$SERVER_BUILD" -name ompdpu-server -type f -perm -u+x | head -n1)
    check_aarch64 ompdpu-server "${server:-$SERVER_BUILD/bin/ompdpu-server}"
  fi
fi
log "server step took $(( $(date +%s) - t1 )) s"

# ---- 3. an aarch64 OpenMP device image -------------------------------------------------------
IMG_DIR=$BUILD/image
rm -rf "$IMG_DIR" && mkdir -p "$IMG_DIR"
log "compiling tests/cross/offload_image.c for $TRIPLE"
# -save-temps (in IMG_DIR) keeps the linked device image, a.out-openmp-$TRIPLE, for comparison.
if ! (cd "$IMG_DIR" && clang-14 -O2 -fopenmp -fopenmp-targets=$TRIPLE -fuse-ld=lld \
        -Xopenmp-target=$TRIPLE -L"$LIBDIR" -save-temps \
        "$REPO/tests/cross/offload_image.c" -o offload_image) >"$IMG_DIR/compile.log" 2>&1; then
  cat "$IMG_DIR/compile.log" >&2
  fail "device image: clang-14 -fopenmp-targets=$TRIPLE failed (log: $IMG_DIR/compile.log)"
else
  host=$IMG_DIR/offload_image
  # The host part is an x86_64 executable...
  if LC_ALL=C readelf -h "$host" | grep -q 'Machine:.*X86-64'; then
    pass "offload program host part is x86_64 with an embedded image: $host"
  else
    fail "offload program host part is not x86_64: $host"
  fi
  # ...whose .rodata holds the device image at symbol .omp_offloading.device_image (clang 14's
  # clang-offload-wrapper; the descriptor's pointers to it are only relocated at load time).
  read -r addr size < <(llvm-nm-14 -S --defined-only "$host" \
                          | awk '$4 == ".omp_offloading.device_image" {print $1, $2; exit}')
  img=$IMG_DIR/offload_image.$TRIPLE.so
  if [ -z "${addr:-}" ]; then
    fail "device image: no .omp_offloading.device_image symbol in $host"
  else
    # File offset of the symbol = its address - its section's address + the section's offset.
    off=
    while read -r _ type saddr soff ssz _; do
      [[ "$type" =~ ^[A-Z_]+$ && "$type" != NOBITS ]] || continue
      if (( 16#$addr >= 16#$saddr && 16#$addr < 16#$saddr + 16#$ssz )); then
        off=$(( 16#$addr - 16#$saddr + 16#$soff )); break
      fi
    done < <(LC_ALL=C readelf -SW "$host" | sed -n 's/^ *\[ *[0-9]*\] *//p')
    if [ -z "$off" ]; then
      fail "device image: cannot locate symbol .omp_offloading.device_image in $host's sections"
    else
      dd if="$host" of="$img" bs=1 skip="$off" count=$((16#$size)) status=none
      check_aarch64 "device image (extracted from the host binary)" "$img"
      saved=$IMG_DIR/a.out-openmp-$TRIPLE
      if [ -f "$saved" ] && ! cmp -s "$saved" "$img"; then
        fail "device image: extracted bytes differ from clang's linked image $saved"
      fi
      # What the server needs from it: the offload entry table, the kernel, libomp.
      if LC_ALL=C readelf -SW "$img" | grep -q omp_offloading_entries \
         && llvm-nm-14 "$img" | grep -q '__omp_offloading_.*main_l' \
         && LC_ALL=C readelf -dW "$img" | grep -q 'NEEDED.*libomp\.so'; then
        pass "device image has omp_offloading_entries, the kernel symbol and NEEDED libomp.so"
      else
        fail "device image lacks omp_offloading_entries, the kernel symbol or NEEDED libomp.so"
      fi
    fi
  fi
fi

# ---- 4. verdict ----------------------------------------------------------------------------------
log "total $(( $(date +%s) - t0 )) s"
if [ ${#failures[@]} -eq 0 ]; then
  echo "PASS: cross-build-aarch64: ompdpu-server and the device image are AArch64 ELF files"
else
  echo "FAIL: cross-build-aarch64: ${#failures[@]} check(s) failed: ${failures[*]}"
fi
echo "cross-aarch64: $passes passed, ${#failures[@]} failed"
[ ${#failures[@]} -eq 0 ]
