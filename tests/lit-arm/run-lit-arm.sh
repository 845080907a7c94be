#!/usr/bin/env bash
# The ctest `lit-arm`: boot the arm64 VM once, run the lit suites given (build/tests/lit-arm/
# offload, fault and arm) against it, stop it, even when interrupted.
#
#   tests/lit-arm/run-lit-arm.sh [--rdma] [--build DIR] [--python PY] [--lit LIT.PY]
#                                [--jobs N] [--vm-name NAME] [LIT-ARGS...] SUITE-DIR...
#
# --rdma: the RDMA testbed (ctest `lit-rdma`): the VM starts with --rdma (soft-RoCE; the
# arm64 plugin is built in build-arm64/plugin), and the suites are build/tests/lit-arm/rdma*.
#
# Builds what is missing first: the arm64 sysroot and the aarch64 ompdpu-server
# (scripts/cross-build-aarch64.sh when build-arm64/server does not exist yet, else an
# incremental build of the server), then the VM image (cached in build-arm64/vm).
# Exit status: lit's; 77 (ctest: skipped) only when the VM cannot run on this machine
# (no /dev/net/tun, not root, no network namespaces, qemu-system-aarch64 not installable),
# with the reason printed; any other failure to build or boot is a failure.
# Environment: OMPDPU_VM_SMP / OMPDPU_VM_MEM (guest cores / MiB, default 2 / 2048),
# OMPDPU_VM_NETEM (a link model, e.g. "rate 10gbit delay 50us"), OMPDPU_ARM64_BUILD
# (default <repo>/build-arm64), OMPDPU_ARM64_SYSROOT, OMPDPU_VM_CACHE (image cache).
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=$REPO/build
PY=/usr/bin/python3
LIT=/usr/lib/llvm-14/build/utils/lit/lit.py
JOBS=2
NAME=
RDMA=
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rdma) RDMA=--rdma; shift ;;
    --build) BUILD=$2; shift 2 ;;
    --python) PY=$2; shift 2 ;;
    --lit) LIT=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    --vm-name) NAME=$2; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
[ -x "$PY" ] || PY=$(command -v python3)
PREFIX=lit-arm; [ -n "$RDMA" ] && PREFIX=lit-rdma
NAME=${NAME:-$PREFIX-$$}
log() { printf '[lit-arm] %s\n' "$*" >&2; }
skip() { echo "SKIPPED: lit-arm: $*"; exit 77; }

# ---- can the VM run here at all? ----------------------------------------------------------
[ "$(id -u)" = 0 ] || skip "not root: the VM needs a network namespace and a TAP device"
[ -c /dev/net/tun ] || skip "no /dev/net/tun: TAP devices are unavailable on this machine"
probe=ompdpu-probe-$$
if ! ip netns add "$probe" 2>/tmp/lit-arm-netns.$$; then
  why=$(cat /tmp/lit-arm-netns.$$); rm -f /tmp/lit-arm-netns.$$
  skip "cannot create a network namespace: $why"
fi
if ! ip netns exec "$probe" ip tuntap add dev tap0 mode tap 2>/tmp/lit-arm-netns.$$; then
  why=$(cat /tmp/lit-arm-netns.$$); ip netns del "$probe"; rm -f /tmp/lit-arm-netns.$$
  skip "cannot create a TAP device in a network namespace: $why"
fi
ip netns del "$probe"; rm -f /tmp/lit-arm-netns.$$

# ---- what the suites need --------------------------------------------------------------
t0=$(date +%s)
for f in "$BUILD/bin/ompdpu" "$BUILD/lib/ompdpu/libomptarget.rtl.aarch64.so" "$BUILD/lib/libompdpu.so"; do
  [ -e "$f" ] || { echo "FAIL: lit-arm: $f not built (ninja -C $BUILD)"; exit 1; }
done
export OMPDPU_ARM64_BUILD=${OMPDPU_ARM64_BUILD:-$REPO/build-arm64}
export OMPDPU_ARM64_SYSROOT=${OMPDPU_ARM64_SYSROOT:-$OMPDPU_ARM64_BUILD/sysroot}
server=$OMPDPU_ARM64_BUILD/server/bin/ompdpu-server
if [ ! -f "$OMPDPU_ARM64_BUILD/server/CMakeCache.txt" ] \
   || [ ! -e "$OMPDPU_ARM64_SYSROOT/usr/lib/aarch64-linux-gnu/libomp.so" ]; then
  log "cross-building the aarch64 server (scripts/cross-build-aarch64.sh)"
  bash "$REPO/scripts/cross-build-aarch64.sh" >&2
  [ -x "$server" ] || { echo "FAIL: lit-arm: no aarch64 server after scripts/cross-build-aarch64.sh"; exit 1; }
fi
export OMPDPU_BUILD_DIR=$BUILD

# ---- VMs left by an earlier run that was killed outright (SIGKILL: no cleanup ran) -------
for d in /run/ompdpu-vm/$PREFIX-*; do
  [ -d "$d" ] || continue
  n=${d##*/}; owner=${n#"$PREFIX"-}; owner=${owner%%-*}
  if [[ "$owner" =~ ^[0-9]+$ ]] && ! kill -0 "$owner" 2>/dev/null; then
    log "stopping $n, left by an earlier run (process $owner is gone)"
    "$PY" "$REPO/scripts/ompdpu-vm" --name "$n" stop --children
  fi
done

# ---- boot once, run the suites, stop (ompdpu-vm session stops the VM on any exit) --------
log "VM $NAME: building the image if needed and booting it"
"$PY" "$REPO/scripts/ompdpu-vm" --name "$NAME" session $RDMA \
    ${OMPDPU_VM_NETEM:+--netem "$OMPDPU_VM_NETEM"} -- \
    "$PY" "$LIT" -sv -j"$JOBS" --param vm_name="$NAME" "${args[@]}" &
session=$!
# Signals to this script go to the session, which stops lit and the VM, then ends.
trap 'kill -TERM $session 2>/dev/null' INT TERM HUP
wait $session; rc=$?
while kill -0 $session 2>/dev/null; do wait $session; rc=$?; done
trap - INT TERM HUP
case $rc in
  77) skip "scripts/ompdpu-vm cannot run the VM here (see its message above)" ;;
  0) log "passed in $(( $(date +%s) - t0 )) s" ;;
  *) log "FAILED (status $rc) after $(( $(date +%s) - t0 )) s" ;;
esac
exit $rc
