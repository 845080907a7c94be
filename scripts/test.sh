#!/usr/bin/env bash
# The README's test command: install what is missing, build, run every test
# (unit, lit end-to-end, fault injection, dnn-kernels, llvm-patches), then
# cross-build the server and a device image for the DPU's aarch64 cores and
# check them. It prints its expected duration first and a line per stage
# with the time elapsed and left (scripts/lib/stages.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${OMPDPU_BUILD:-build}
source scripts/lib/stages.sh

build() {
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$BUILD" -j"${JOBS:-2}"
}

# The RDMA testbed (label rdma, about 6 minutes: tests/lit-arm/README.md) is opt-in:
# `scripts/test.sh -L rdma`, or `ctest --test-dir build -L rdma`.
run=test
[ $# -gt 0 ] && run=test-custom
[ $# -gt 0 ] || set -- -LE rdma
# Built-in estimates (s) on the 2-core machine, for a first run.
stages_begin test "$run" deps=30 build=300 ctest=2100 llvm-patches=300 cross-build=120
stage deps scripts/install-deps.sh
stage build build
stage ctest ctest --test-dir "$BUILD" --output-on-failure --timeout 2400 "$@"
# llvm-patches/: applied to the installed libomptarget's source, built, and
# the end-to-end suite run again against the patched library.
stage llvm-patches env OMPDPU_BUILD="$BUILD" bash llvm-patches/apply-and-test.sh
stage cross-build bash scripts/cross-build-aarch64.sh
stages_end
