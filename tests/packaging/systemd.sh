# shellcheck shell=bash
# Sourced by tests/packaging/run.sh: the DPU package's service under a real
# systemd. A Debian 12 root with systemd (mmdebstrap, cached beside the
# packaging base) gets the amd64 ompdpu-server package with apt, a key and a
# loopback address in /etc/ompdpu, and the unit enabled; systemd-nspawn boots
# it (systemd as PID 1, the host's network). The program built in the clean
# root then runs on this machine against that service: its region must run
# in a session child of the unit's main process, as the ompdpu account (the
# client authenticates as root), with the unit active and its journal
# holding the server's lines.
# Needs: ROOT (the clean root with the host package), WORK, REPO, ex, pass,
# fail, step, packaging_cache.

SYSTEMD_PKGS=(systemd systemd-sysv dbus)
SD_PORT=${OMPDPU_PACKAGING_SD_PORT:-18571}

systemd_base() {
  local key tar
  key=$(printf '%s\n' bookworm minbase "${SYSTEMD_PKGS[@]}" | sort | tr '\n' ' ')
  tar=$PACKAGING_CACHE/systemd-$(echo "$key" | sha256sum | cut -c1-12).tar
  debian_root_make "$tar" "$tar.key" "$key" bookworm \
    "$(IFS=,; echo "${SYSTEMD_PKGS[*]}")" "$PACKAGING_CACHE/mmdebstrap-systemd.log" || return 1
  echo "$tar"
}

# Run a command inside the booted container (its PID 1's namespaces).
in_container() { nsenter -t "$SD_LEADER" -a -- "$@"; }

systemd_service_test() {
  command -v systemd-nspawn >/dev/null ||
    fail "no systemd-nspawn (scripts/install-deps.sh installs systemd-container)"
  local base sd key t
  base=$(systemd_base) || fail "cannot make the systemd root file system"
  sd=$WORK/sdroot
  mkdir -p "$sd/opt/debs"
  tar -xf "$base" -C "$sd"
  cp "$WORK"/debs/ompdpu-server_*_amd64.deb "$sd/opt/debs/"
  debian_root_exec "$sd" -- sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    /opt/debs/ompdpu-server_*_amd64.deb' >"$WORK/sd-apt.log" 2>&1 ||
    { cat "$WORK/sd-apt.log"; fail "apt could not install ompdpu-server in the systemd root"; }
  # The client here is root: root's key, and its sessions run as ompdpu.
  key=$WORK/sd.key
  LD_LIBRARY_PATH=$ROOT/usr/lib "$ROOT/usr/bin/ompdpu" key create "$key" >/dev/null ||
    fail "ompdpu key create failed"
  install -m 600 "$key" "$sd/etc/ompdpu/key"
  sed -i "s|^OMPDPU_SERVER_ARGS=.*|OMPDPU_SERVER_ARGS=\"--listen 127.0.0.1:$SD_PORT --key /etc/ompdpu/key\"|" \
    "$sd/etc/ompdpu/server.conf"
  mkdir -p "$sd/etc/systemd/system/multi-user.target.wants"
  ln -sf /lib/systemd/system/ompdpu-server.service \
    "$sd/etc/systemd/system/multi-user.target.wants/ompdpu-server.service"
  # No machined here: no registration; the container dies with this shell.
  systemd-nspawn -q --register=no --keep-unit -D "$sd" -b --console=pipe \
    </dev/null >"$WORK/nspawn.log" 2>&1 &
  SD_NSPAWN_PID=$!
  trap 'kill -TERM $SD_NSPAWN_PID 2>/dev/null && sleep 1; kill -KILL $SD_NSPAWN_PID 2>/dev/null || true
    rm -rf --one-file-system "$WORK"' EXIT
  SD_LEADER=
  for t in $(seq 100); do
    SD_LEADER=$(pgrep -P "$SD_NSPAWN_PID" -x systemd || true)
    [[ -n $SD_LEADER ]] && in_container systemctl is-active -q ompdpu-server 2>/dev/null && break
    sleep 0.3
  done
  [[ -n $SD_LEADER ]] || { cat "$WORK/nspawn.log"; fail "systemd-nspawn did not boot the root"; }
  in_container systemctl is-active -q ompdpu-server ||
    { in_container systemctl status ompdpu-server --no-pager || true
      in_container journalctl -u ompdpu-server --no-pager || true
      fail "ompdpu-server.service is not active under systemd"; }
  step "systemd booted, ompdpu-server.service active"
  local main uid out
  main=$(in_container systemctl show -p MainPID --value ompdpu-server)
  uid=$(awk -F: '$1 == "ompdpu" { print $3 }' "$sd/etc/passwd")
  out=$WORK/sd-run.out
  OMP_TARGET_OFFLOAD=mandatory OMPDPU_DEVICES=127.0.0.1:$SD_PORT OMPDPU_KEY=$key \
    OMPDPU_PLUGIN_DIR=$ROOT/usr/lib/ompdpu/emulated LD_LIBRARY_PATH=$ROOT/usr/lib \
    OMPDPU_SERVER=$ROOT/usr/lib/ompdpu/ompdpu-server \
    "$ROOT/usr/bin/ompdpu" run -- "$ex/build/where_it_runs" >"$out" 2>&1 ||
    { cat "$out"; in_container journalctl -u ompdpu-server --no-pager || true
      fail "the program failed against the systemd service"; }
  # The region's process was a session of the unit's main process (both pids
  # of the container's namespace), running as ompdpu.
  grep -q "^region in process [0-9]* (child of [0-9]*) as uid $uid;" "$out" ||
    { cat "$out"; fail "the region did not run as the ompdpu account (uid $uid)"; }
  in_container journalctl -u ompdpu-server --no-pager -o cat >"$WORK/sd-journal.log" 2>&1 || true
  grep -q "listening on 127.0.0.1:$SD_PORT" "$WORK/sd-journal.log" ||
    { cat "$WORK/sd-journal.log"; fail "the journal has no listening line of ompdpu-server"; }
  local ppid
  ppid=$(sed -n 's/^region in process [0-9]* (child of \([0-9]*\)).*/\1/p' "$out")
  [[ $ppid == "$main" ]] ||
    { cat "$out"; fail "the region's parent $ppid is not the unit's main process $main"; }
  pass "ompdpu-server.service under systemd (nspawn): active after READY=1, the region ran in a session of its main process $main as ompdpu (uid $uid), journal has its lines"
  kill -TERM "$SD_NSPAWN_PID" 2>/dev/null || true
  wait "$SD_NSPAWN_PID" 2>/dev/null || true
  step "systemd service"
}
