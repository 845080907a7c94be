#!/usr/bin/env bash
# The unit tests and the end-to-end suite (tests/lit: offload/ and fault/)
# with the plugin, libompdpu, the ompdpu command and the server (supervisor
# and sessions) built with the CMake presets `asan` (AddressSanitizer+UBSan)
# and `tsan` (ThreadSanitizer) in ~/.cache/ompdpu/sanitizers/<kind>; any
# finding fails the run. ctest label `sanitizers` (tests/CMakeLists.txt).
# Usage: scripts/sanitizers.sh [asan] [tsan] [--unit-only]
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
kinds=()
lit=1
for a in "$@"; do
  case $a in
  asan | tsan) kinds+=("$a") ;;
  --unit-only) lit=0 ;;
  *) echo "usage: $0 [asan] [tsan] [--unit-only]" >&2 && exit 2 ;;
  esac
done
((${#kinds[@]})) || kinds=(asan tsan)
root=$HOME/.cache/ompdpu/sanitizers
mkdir -p "$root"
# One run at a time: every clone's run builds through the same link below.
exec 9>"$root/lock"
flock 9
# The builds see the source through this link, not the clone's own path: a
# fresh clone elsewhere then reuses the build directory (no new configure)
# and, though ninja recompiles its newer files, ccache has every object.
ln -sfn "$src" "$root/source"
launcher=()
if command -v ccache >/dev/null; then
  export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ompdpu/ccache}
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
targets=(ompdpu-server ompdpu-cli ompdpu omptarget.rtl.dpu_x86_64
  ompdpu-unit-tests ompdpu-connection-tests ompdpu-server-tests
  ompdpu-device-tests ompdpu-tools-tests)
units=(ompdpu-unit-tests ompdpu-connection-tests ompdpu-server-tests
  ompdpu-device-tests ompdpu-tools-tests)
status=0
for kind in "${kinds[@]}"; do
  dir=$root/$kind
  reports=$dir/reports
  echo "== $kind ($dir)"
  start=$SECONDS
  (cd "$root/source" && cmake --preset "$kind" "${launcher[@]}" >/dev/null)
  # ninja goes by mtimes, and another clone's objects can be newer than this
  # clone's changes: a change of clone starts clean (from ccache's objects).
  [[ $(cat "$dir/source-clone" 2>/dev/null) == "$src" ]] ||
    cmake --build "$dir" --target clean >/dev/null
  nice -n 10 cmake --build "$dir" -j"${JOBS:-2}" --target "${targets[@]}"
  echo "$src" >"$dir/source-clone"
  echo "sanitizers: $kind built in $((SECONDS - start)) s"
  # Every report goes to a file (log_path), whichever process it came from:
  # sessions run as other users, hence the sticky world-writable directory.
  rm -rf "$reports" && mkdir -p "$reports" && chmod 1777 "$reports"
  # No leak checks: a trial (tests/README.md) found only others' memory
  # (python3, a test program, an event libomptarget 14 never destroys).
  # Each runtime also reads the others' variables (TSan: UBSAN_OPTIONS).
  unset ASAN_OPTIONS UBSAN_OPTIONS TSAN_OPTIONS OMP_TOOL
  if [[ $kind == asan ]]; then
    export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:log_path=$reports/asan
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:log_path=$reports/asan
  else
    # libomp is not instrumented: TSan cannot see its atomics, so the
    # pthread calls it makes would report races between its own threads;
    # ignore_noninstrumented_modules checks interceptors called from our
    # code only. libomp loads archer (its TSan tool) by itself, but archer
    # 14 dereferences null in every teams region: off.
    export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:ignore_noninstrumented_modules=1:suppressions=$src/tests/sanitizers/tsan.supp:log_path=$reports/tsan
    export OMP_TOOL=disabled
  fi
  # LandedAnswersBeforeTheKernelEnds runs a kernel that spins on memory a
  # later request writes: a data race by design, in the kernel's own code.
  skip="*"
  [[ $kind == tsan ]] && skip="-ServerTest.LandedAnswersBeforeTheKernelEnds"
  start=$SECONDS
  for t in "${units[@]}"; do
    if ! "$dir/bin/$t" --gtest_brief=1 --gtest_filter="$skip"; then
      echo "sanitizers: $t failed under $kind"
      status=1
    fi
  done
  echo "sanitizers: $kind unit tests in $((SECONDS - start)) s"
  if ((lit)); then
    start=$SECONDS
    # The fault tests crash kernels on purpose: the server reports those
    # signals itself, so the runtimes must not take them over.
    ASAN_OPTIONS+=:handle_segv=0 TSAN_OPTIONS+=:handle_segv=0 \
      nice -n 10 /usr/bin/python3 /usr/lib/llvm-14/build/utils/lit/lit.py -sv -j2 \
      "$dir/tests/lit/offload" "$dir/tests/lit/fault" || {
      echo "sanitizers: lit failed under $kind"
      status=1
    }
    echo "sanitizers: $kind lit suite in $((SECONDS - start)) s"
  fi
  if compgen -G "$reports/*" >/dev/null; then
    echo "sanitizers: findings under $kind:"
    for f in "$reports"/*; do
      echo "--- $f" && cat "$f"
    done
    status=1
  fi
done
exit $status
