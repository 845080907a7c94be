#!/usr/bin/env bash
# The README's test command: install what is missing, build, run every test
# (unit, lit end-to-end, fault injection, dnn-kernels, llvm-patches), then
# cross-build the server and a device image for the DPU's aarch64 cores and
# check them.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${OMPDPU_BUILD:-build}

scripts/install-deps.sh
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD" -j"${JOBS:-2}"
# The RDMA testbed (label rdma, about 6 minutes: tests/lit-arm/README.md) is opt-in:
# `scripts/test.sh -L rdma`, or `ctest --test-dir build -L rdma`.
[ $# -gt 0 ] || set -- -LE rdma
ctest --test-dir "$BUILD" --output-on-failure --timeout 2400 "$@"
# llvm-patches/: applied to the installed libomptarget's source, built, and
# the end-to-end suite run again against the patched library.
OMPDPU_BUILD=$BUILD bash llvm-patches/apply-and-test.sh
bash scripts/cross-build-aarch64.sh
