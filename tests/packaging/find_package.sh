#!/usr/bin/env bash
# find_package(ompdpu) as a user's project does it, with the README's CMake
# snippet as it is written there (its first ```cmake block): against the
# build tree (-Dompdpu_DIR=<build>/cmake, and CMAKE_PREFIX_PATH=<build>) and
# against a fresh `cmake --install <build> --prefix P` (staged with DESTDIR:
# every file must land under DESTDIR/P, nothing beside it). Each consumer's
# programs are built, and the x86_64 one (the snippet with EMULATE) runs under
# `<build>/bin/ompdpu run --emulate 1` with OMP_TARGET_OFFLOAD=mandatory.
#
#   tests/packaging/find_package.sh BUILD_DIR
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BUILD=$(realpath "${1:?usage: find_package.sh BUILD_DIR}")
pass() { printf 'PASS: %s\n' "$*"; }
fail() { printf 'FAIL: find_package: %s\n' "$*"; exit 1; }
for f in bin/ompdpu bin/ompdpu-cc lib/libompdpu.so cmake/ompdpuConfig.cmake; do
  [[ -e $BUILD/$f ]] || fail "$BUILD/$f missing: build the project first"
done
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ompdpu-find-package.XXXXXX")
trap 'rm -rf --one-file-system "$WORK"' EXIT

# ---- the user's project: the README's snippet, verbatim ------------------------------
python3 "$HERE/readme_blocks.py" "$REPO/README.md" cmake "$WORK/readme" >/dev/null
snippet=$(cat "$WORK/readme/1.cmake" 2>/dev/null || :)
grep -q 'find_package(ompdpu' <<<"$snippet" ||
  fail "README.md's first \`\`\`cmake block has no find_package(ompdpu): $snippet"
grep -q 'ompdpu_add_device_images(app)' <<<"$snippet" ||
  fail "README.md's snippet no longer builds 'app' with ompdpu_add_device_images(app)"
# The same lines for app_emulated, with x86_64 images (EMULATE) to run here.
emulated=$(sed -e 's/(app\b/(app_emulated/g' \
  -e 's/ompdpu_add_device_images(app_emulated)/ompdpu_add_device_images(app_emulated EMULATE)/' \
  <<<"$snippet")
SRC=$WORK/app
mkdir -p "$SRC"
{
  echo 'cmake_minimum_required(VERSION 3.20)'
  echo 'project(app C)'
  echo 'add_executable(app app.c)'
  echo '# ---- README.md, verbatim'
  echo "$snippet"
  echo '# ---- the same, EMULATE'
  echo 'add_executable(app_emulated app.c)'
  echo "$emulated"
} >"$SRC/CMakeLists.txt"
cat >"$SRC/app.c" <<'C'
/* Runs one region on DPU 0; says where it ran. */
#include <ompdpu.h>
#include <omp.h>
#include <stdio.h>

int main(void) {
  int dev = ompdpu_device(0), initial = -1, sum = 0;
  if (dev < 0) {
    printf("no DPU\n");
    return 1;
  }
#pragma omp target device(dev) map(from : initial, sum)
  {
    initial = omp_is_initial_device();
    for (int i = 1; i <= 100; ++i)
      sum += i;
  }
  printf("omp_is_initial_device()==%d sum=%d\n", initial, sum);
  return initial == 0 && sum == 5050 ? 0 : 1;
}
C

# consumer NAME CMAKE_ARGS...: configure, build, run app_emulated.
consumer() {
  local name=$1 bin=$WORK/$1
  shift
  cmake -S "$SRC" -B "$bin" -G Ninja -DCMAKE_C_COMPILER=clang-14 "$@" \
    >"$WORK/$name.configure.log" 2>&1 ||
    { cat "$WORK/$name.configure.log"; fail "$name: configure failed"; }
  cmake --build "$bin" >"$WORK/$name.build.log" 2>&1 ||
    { cat "$WORK/$name.build.log"; fail "$name: build failed"; }
  # app carries an aarch64 device image (an embedded ELF for EM_AARCH64, 183)
  # and app_emulated an x86_64 one (EM_X86_64, 62).
  local want=(app:183 app_emulated:62) w
  for w in "${want[@]}"; do
    python3 - "$bin/${w%%:*}" "${w#*:}" <<'PY' || fail "$name: ${w%%:*} has no device image for e_machine ${w#*:}"
import struct, sys
data, want = open(sys.argv[1], "rb").read(), int(sys.argv[2])
at = data.find(b"\x7fELF", 1)
while at > 0:
    if struct.unpack_from("<H", data, at + 18)[0] == want:
        sys.exit(0)
    at = data.find(b"\x7fELF", at + 1)
sys.exit(1)
PY
  done
  local out
  out=$(cd "$bin" && OMP_TARGET_OFFLOAD=mandatory \
    "$BUILD/bin/ompdpu" run --emulate 1 -- ./app_emulated 2>&1) ||
    fail "$name: ompdpu run --emulate 1 -- ./app_emulated: $out"
  grep -q 'omp_is_initial_device()==0 sum=5050' <<<"$out" ||
    fail "$name: the region did not run on the emulated DPU: $out"
  pass "$name: configured, built app (aarch64 image) and app_emulated (x86_64), ran on an emulated DPU"
}

# ---- (a) the build tree ---------------------------------------------------------------------
consumer build-tree-dir -Dompdpu_DIR="$BUILD/cmake"
consumer build-tree-prefix -DCMAKE_PREFIX_PATH="$BUILD"

# ---- (b) an install prefix ------------------------------------------------------------------
PREFIX=$WORK/prefix
ROOT=$WORK/root
DESTDIR=$ROOT cmake --install "$BUILD" --prefix "$PREFIX" >"$WORK/install.log" 2>&1 ||
  { cat "$WORK/install.log"; fail "cmake --install failed"; }
outside=$(cd "$ROOT" && find . ! -type d | sed 's|^\.||' | { grep -v "^$PREFIX/" || :; })
[[ -z $outside ]] || fail "cmake --install --prefix $PREFIX wrote outside it: $outside"
for f in etc/ompdpu/server.conf lib/cmake/ompdpu/ompdpuConfig.cmake \
  share/man/man1/ompdpu.1.gz share/man/man1/ompdpu-cc.1.gz \
  share/man/man1/ompdpu-c++.1.gz share/man/man8/ompdpu-server.8.gz; do
  [[ -e $ROOT$PREFIX/$f ]] || fail "cmake --install: no $f in the prefix"
done
pass "cmake --install --prefix P: $(cd "$ROOT$PREFIX" && find . ! -type d | wc -l) files, all under P"
# The prefix as installed (relocated: DESTDIR/P works as well as P).
consumer install-prefix -DCMAKE_PREFIX_PATH="$ROOT$PREFIX"
