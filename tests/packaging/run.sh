#!/usr/bin/env bash
# ompdpu installed and used as users do: builds the Debian packages
# (scripts/package.sh, lintian included), checks the DPU package's systemd
# unit (systemd-analyze verify) and readiness (READY=1), installs the host
# package with apt into a clean Debian 12 root (mmdebstrap, base cached in
# ~/.cache/ompdpu/packaging), builds a user's project there with
# find_package(ompdpu) and with ompdpu-cc, and runs it with
# `ompdpu run --emulate` from the package; boots the DPU package's service
# under systemd (tests/packaging/systemd.sh); then runs the aarch64 build with the
# packaged plugin against the packaged arm64 server in the arm64 VM
# (scripts/ompdpu-vm). Root is needed (chroot, network namespace).
#
#   tests/packaging/run.sh [scripts/package.sh options, e.g. --no-arm64]
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
. "$HERE/base.sh"
. "$HERE/example.sh"
. "$HERE/systemd.sh"
T0=$(date +%s)
step() { printf '[packaging] %s (%d s)\n' "$*" $(($(date +%s) - T0)) >&2; }
pass() { printf 'PASS: %s\n' "$*"; }
fail() { printf 'FAIL: packaging: %s\n' "$*"; exit 1; }
[[ $(id -u) -eq 0 ]] || { echo "SKIP: packaging: needs root (chroot, mmdebstrap)"; exit 77; }
WORK=$(mktemp -d /var/tmp/ompdpu-packaging.XXXXXX)
trap 'rm -rf --one-file-system "$WORK"' EXIT

# ---- packages ----------------------------------------------------------------------------
bash "$REPO/scripts/package.sh" --out "$WORK/debs" "$@" >"$WORK/package.log" 2>&1 ||
  { cat "$WORK/package.log"; fail "scripts/package.sh failed"; }
pass "packages built, lintian clean: $(cd "$WORK/debs" && echo *.deb)"
step packages

# ---- the DPU package's service -----------------------------------------------------------
for deb in "$WORK"/debs/ompdpu-server_*.deb; do
  unit=$WORK/unit-$(dpkg-deb -f "$deb" Architecture)
  dpkg-deb -x "$deb" "$unit"
  # The unit's dependencies (sysinit.target, ...) come from this machine.
  cp -a /lib/systemd/system/. "$unit/usr/lib/systemd/system/"
  msg=$(systemd-analyze verify --root="$unit" \
    "$unit/usr/lib/systemd/system/ompdpu-server.service" 2>&1) ||
    fail "systemd-analyze verify $(basename "$deb"): $msg"
  [[ -z $msg ]] || fail "systemd-analyze verify $(basename "$deb") warns: $msg"
  grep -q '^OMPDPU_SERVER_ARGS=' "$unit/etc/ompdpu/server.conf" ||
    fail "$(basename "$deb"): no OMPDPU_SERVER_ARGS in /etc/ompdpu/server.conf"
  pass "systemd-analyze verify: ompdpu-server.service of $(basename "$deb")"
done
python3 "$HERE/notify_check.py" "$WORK/unit-amd64/usr/bin/ompdpu-server" >"$WORK/notify.log" 2>&1 ||
  { cat "$WORK/notify.log"; fail "the packaged server sends no READY=1 to NOTIFY_SOCKET"; }
pass "the packaged server tells systemd it is ready ($(grep "^notify:" "$WORK/notify.log"))"
step service

# ---- a clean Debian 12 with the host package ---------------------------------------------
base=$(packaging_base) || fail "cannot make the base root file system"
step "base root $base"
ROOT=$WORK/root
mkdir -p "$ROOT"
tar -xf "$base" -C "$ROOT"
mkdir -p "$ROOT/opt/debs"
cp "$WORK"/debs/ompdpu_*_amd64.deb "$WORK"/debs/ompdpu-server_*_amd64.deb "$ROOT/opt/debs/"
# The README's commands first, on the fresh machine (its apt install is the
# first): readme_snippets.sh --installed, with the packages beside them.
mkdir -p "$ROOT/opt/readme"
cp "$HERE/readme_snippets.sh" "$HERE/readme_blocks.py" "$REPO/README.md" "$ROOT/opt/readme/"
debian_root_exec "$ROOT" -- sh -c 'apt-get update -qq &&
  /opt/readme/readme_snippets.sh --installed /opt/debs /opt/readme/README.md' \
  >"$WORK/readme.log" 2>&1 || { cat "$WORK/readme.log"; fail "the README's commands, in the clean root"; }
grep '^PASS' "$WORK/readme.log" | sed 's/^PASS: /PASS: clean root: /'
step "the README's commands in the clean root"
write_example "$ROOT/opt/example"
cp "$HERE/inside.sh" "$ROOT/opt/inside.sh"
debian_root_exec "$ROOT" -- /opt/inside.sh >"$WORK/inside.log" 2>&1 ||
  { cat "$WORK/inside.log"; fail "install, build or run in the clean root failed"; }
step "install, build and run in the clean root"
out=$ROOT/opt/out
pass "apt installed $(dpkg-deb -f "$WORK"/debs/ompdpu_*_amd64.deb Package) with its Depends and Recommends"
# The server package's account: a system user (uid below 1000), no shell, no
# home; the same after a reinstall.
IFS=: read -r name _ uid _ _ home shell < <(head -1 "$out/account") ||
  fail "the server package made no ompdpu account"
[[ $name == ompdpu && $uid -lt 1000 && $home == /nonexistent && $shell == */nologin ]] ||
  fail "the ompdpu account is not a system account: $(head -1 "$out/account")"
[[ $(sed -n 1p "$out/account") == "$(sed -n 2p "$out/account")" ]] ||
  fail "a reinstall changed the ompdpu account: $(cat "$out/account")"
pass "ompdpu-server's postinst made the --root-user account (uid $uid, $shell), kept on reinstall"

# ---- what the runs prove -------------------------------------------------------------------
# Machines of the ELF files embedded in a program (its device images).
machines() { python3 - "$1" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
i, m = 1, set()
while (i := d.find(b"\x7fELF", i)) > 0:
    m.add(struct.unpack_from("<H", d, i + 18)[0]); i += 4
print(" ".join(str(x) for x in sorted(m)))
PY
}
for exe in where_it_runs cc-emulated; do
  o=$out/$exe.out
  servers=$(sed -n 's/^servers //p' "$o")
  grep -q '^sum 500500 on device 0 of 1 DPUs: initial device 0$' "$o" ||
    { cat "$o"; fail "$exe: wrong sum or not on the DPU"; }
  # Sessions are children of the server: the region ran server-side.
  grep -q "^region in process [0-9]* (child of $servers) as uid" "$o" ||
    { cat "$o"; fail "$exe: the region's process is no session of server $servers"; }
  grep -q 'LoadImage: 1 requests' "$o" || { cat "$o"; fail "$exe: no LoadImage in OMPDPU_TRACE"; }
  pass "$exe ($([[ $exe == cc-* ]] && echo ompdpu-cc --emulate || echo "find_package(ompdpu)")): ran in a session of emulated DPU server $servers (OMP_TARGET_OFFLOAD=mandatory)"
done
ex=$ROOT/opt/example
[[ $(machines "$ex/build/where_it_runs") == 62 ]] || fail "where_it_runs: device image not x86_64"
[[ $(machines "$ex/build/where_it_runs_dpu") == 183 ]] ||
  fail "where_it_runs_dpu: device image not AArch64 ($(machines "$ex/build/where_it_runs_dpu"))"
pass "ompdpu_add_device_images: x86_64 images with EMULATE, AArch64 without"
img=$ex/aarch64/a.out-openmp-aarch64-unknown-linux-gnu  # -save-temps: the linked image
LC_ALL=C readelf -h "$img" | grep -q 'Machine:.*AArch64' || fail "ompdpu-cc: $img is not AArch64"
LC_ALL=C readelf -d "$img" | grep -q 'NEEDED.*\[libomp.so.5\]' || fail "ompdpu-cc: $img needs no libomp.so.5"
pass "ompdpu-cc: AArch64 device image that needs libomp.so.5"
grep -q '^clang-14 -fopenmp -fopenmp-targets=aarch64-unknown-linux-gnu -fuse-ld=lld .* -O2 x.c$' \
  "$out/showme-cc" || fail "ompdpu-cc --showme: $(cat "$out/showme-cc")"
grep -qx 'clang++-14 -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu -c x.cpp' "$out/showme-cxx" ||
  fail "ompdpu-c++ --emulate --showme: $(cat "$out/showme-cxx")"
pass "ompdpu-cc/ompdpu-c++ --showme print the underlying command"

# ---- the DPU package's service under a real systemd ---------------------------------------
systemd_service_test

# ---- the aarch64 path: the packages' plugin and arm64 server, in the arm64 VM ---------------
if [[ -f $WORK/unit-arm64/usr/bin/ompdpu-server ]]; then
  # The program built in the clean root with ompdpu-cc (aarch64 images), run on
  # this machine with the packaged plugin and libompdpu against the packaged
  # arm64 server in scripts/ompdpu-vm's guest.
  vm() {
    OMPDPU_BUILD_DIR=$ROOT/usr OMPDPU_PLUGIN_DIR=$ROOT/usr/lib/ompdpu \
      python3 "$REPO/scripts/ompdpu-vm" --name packaging "$@"
  }
  export -f vm
  export ROOT REPO ex
  set +e
  vm session --servers 1 --server "$WORK/unit-arm64/usr/bin/ompdpu-server" -- \
    bash -c 'LD_LIBRARY_PATH=$ROOT/usr/lib vm run -- env OMP_TARGET_OFFLOAD=mandatory \
      "$ex/aarch64/cc-dpu"' >"$WORK/vm.log" 2>&1
  rc=$?
  set -e
  if ((rc == 77)); then
    echo "SKIP: the arm64 VM cannot run here: $(tail -1 "$WORK/vm.log")"
  elif ((rc != 0)) || ! grep -q '^sum 500500 on device 0 of 1 DPUs: initial device 0$' "$WORK/vm.log"; then
    cat "$WORK/vm.log"
    fail "the aarch64 program did not run on the packaged arm64 server in the VM"
  else
    pass "ompdpu-cc's aarch64 program ran on the packaged arm64 server (arm64 VM), packaged plugin"
  fi
  step "arm64 VM"
fi
step finished
echo "packaging: all checks passed in $(($(date +%s) - T0)) s"
