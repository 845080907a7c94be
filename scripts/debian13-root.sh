#!/usr/bin/env bash
# A Debian 13 ("trixie") root file system, where LLVM 17's and 18's own
# packages run (they need trixie's glibc): made once with mmdebstrap, reused
# while its package list is the same. libomp 18 is in /opt/libomp-18.
#
#   scripts/debian13-root.sh --path             make it if missing; print its path
#   scripts/debian13-root.sh [--bind DIR]... -- COMMAND...
#       run COMMAND inside it (chroot, in a private mount namespace, with /proc,
#       /dev, /sys and a fresh /tmp), each DIR bind-mounted at its own path
#
# ompdpu's binaries from the Debian 12 build run inside as they are (trixie's
# glibc, UCX, libffi and Open MPI keep their sonames). Root is needed.
# Environment: OMPDPU_CACHE (default ${XDG_CACHE_HOME:-~/.cache}/ompdpu): the
# root is $OMPDPU_CACHE/debian13/root (about 800 MB).
set -euo pipefail
die() { echo "debian13-root: error: $*" >&2; exit 1; }
CACHE=$(realpath -m "${OMPDPU_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ompdpu}")
ROOT=$CACHE/debian13/root
PACKAGES=(clang-17 clang-tools-17 libomp-17-dev llvm-17-tools clang-18 clang-tools-18 libucx0 libffi8
  libelf1t64 libsodium23 libmunge2 libopenmpi40 python3 python3-psutil binutils libc6-dev)
# shellcheck source=lib/debian-root.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/debian-root.sh"

make_root() {
  local want
  want=$(printf '%s\n' "${PACKAGES[@]}" libomp-18-dev@/opt/libomp-18 | sort)
  # libomp-18-dev conflicts with libomp-17-dev: 18's is unpacked into
  # /opt/libomp-18 instead (tests/llvm-versions links against it there).
  local omp18='cd /tmp && apt-get update -qq && apt-get download -qq libomp5-18 libomp-18-dev &&
    for d in ./*.deb; do dpkg -x "$d" /opt/libomp-18; done && rm -f ./*.deb'
  debian_root_make "$ROOT" "$ROOT/.ompdpu-packages" "$want" trixie \
    "$(IFS=,; echo "${PACKAGES[*]}")" "$CACHE/debian13/mmdebstrap.log" \
    --customize-hook="chroot \"\$1\" sh -c '$omp18'" || die "cannot make $ROOT"
  if [[ ! -f $ROOT/opt/libomp-18/usr/lib/llvm-18/lib/libomptarget.so.18.1 ]]; then
    rm -rf "$ROOT"
    die "no libomp 18 in $ROOT/opt/libomp-18 (log: $CACHE/debian13/mmdebstrap.log)"
  fi
}

BINDS=()
case ${1:-} in
--path) make_root; echo "$ROOT"; exit 0 ;;
-h | --help | '') sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
esac
while [[ ${1:-} == --bind ]]; do
  BINDS+=("$(realpath "${2:?--bind needs a directory}")")
  shift 2
done
[[ ${1:-} == -- ]] || die "expected -- COMMAND (see --help)"
shift
(($#)) || die "no COMMAND"
make_root
debian_root_exec "$ROOT" "${BINDS[@]}" -- "$@"
