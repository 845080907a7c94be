# shellcheck shell=bash
# Shared by the scripts that need a Debian root file system (sourced, not run):
# made once with mmdebstrap, reused while its package list is the same, and
# commands run inside it with chroot in a private mount namespace.
#
#   debian_root_make TARGET KEYFILE KEY SUITE PACKAGES LOG [MMDEBSTRAP OPTION]...
#       TARGET: a directory, or a file ending in .tar (mmdebstrap picks the
#       format); PACKAGES: comma-separated; KEYFILE holds KEY (what TARGET was
#       made from) and TARGET is remade only when it differs.
#   debian_root_exec ROOT [BIND_DIR]... -- COMMAND...
#       run COMMAND inside ROOT with /proc, /dev, /sys and a fresh /tmp, each
#       BIND_DIR mounted at its own path.
# Environment: OMPDPU_DEBIAN_MIRROR (default http://deb.debian.org/debian, as
# in this machine's apt sources).

debian_root_make() {
  local target=$1 keyfile=$2 want=$3 suite=$4 packages=$5 log=$6
  shift 6
  [[ -e $target && -f $keyfile && $(cat "$keyfile") == "$want" ]] && return 0
  [[ $(id -u) -eq 0 ]] || { echo "debian-root: making $target needs root" >&2; return 1; }
  command -v mmdebstrap >/dev/null ||
    { echo "debian-root: no mmdebstrap (scripts/install-deps.sh installs it)" >&2; return 1; }
  echo "[debian-root] mmdebstrap $suite into $target (a few minutes)" >&2
  local new=$target.new
  [[ $target == *.tar ]] && new=${target%.tar}.new.tar
  rm -rf "$new" "$target" "$keyfile"
  mkdir -p "$(dirname "$target")" "$(dirname "$log")"
  mmdebstrap --variant=apt --include="$packages" "$@" "$suite" "$new" \
    "${OMPDPU_DEBIAN_MIRROR:-http://deb.debian.org/debian}" >"$log" 2>&1 ||
    { echo "debian-root: mmdebstrap failed (log: $log)" >&2; return 1; }
  mv "$new" "$target"
  echo "$want" >"$keyfile"
}

debian_root_exec() {
  local root=$1 mounts d
  shift
  local binds=()
  while [[ ${1:-} != -- ]]; do
    binds+=("$(realpath "${1:?debian_root_exec: expected -- COMMAND}")")
    shift
  done
  shift
  mounts="mount -t proc proc '$root/proc' && mount --rbind /dev '$root/dev' &&
    mount --rbind /sys '$root/sys' && mount -t tmpfs tmpfs '$root/tmp'"
  for d in "${binds[@]}"; do
    # Made after the tmpfs on /tmp, which would hide a mount point below it.
    mounts+=" && mkdir -p '$root$d' && mount --bind '$d' '$root$d'"
  done
  # The mounts live and die with this namespace: nothing to clean up.
  unshare -m --propagation private sh -c "$mounts && exec chroot '$root' \"\$@\"" sh "$@"
}
