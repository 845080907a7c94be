#!/usr/bin/env bash
# Build ompdpu and run examples/demo.c on an emulated DPU: a real
# ompdpu-server process reached over UCX on loopback.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${OMPDPU_BUILD:-build}
scripts/install-deps.sh
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD" -j"${JOBS:-2}" --target ompdpu-server ompdpu-cli ompdpu ompdpu-plugins
clang-14 -O2 -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu -Iruntime/include \
  examples/demo.c -o "$BUILD/demo" -L"$BUILD/lib" -lompdpu -Wl,-rpath,"$PWD/$BUILD/lib"
OMP_TARGET_OFFLOAD=mandatory "$BUILD/bin/ompdpu" run --emulate 1 --pin -- "$BUILD/demo"
