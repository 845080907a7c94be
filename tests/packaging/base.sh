# shellcheck shell=bash
# The clean Debian 12 root of tests/packaging (sourced): a tarball made once
# with mmdebstrap, reused while its package list is the same.
# Environment: OMPDPU_CACHE (default ${XDG_CACHE_HOME:-~/.cache}/ompdpu).
# shellcheck source=../../scripts/lib/debian-root.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/debian-root.sh"

PACKAGING_CACHE=$(realpath -m "${OMPDPU_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ompdpu}")/packaging
# What a user brings: a compiler with OpenMP and CMake; ompdpu's own
# dependencies come from its package's Depends, at install time.
PACKAGING_BASE_PKGS=(clang-14 clang-tools-14 llvm-14 libomp-14-dev cmake make)

# packaging_base: make the tarball if needed; print its path.
packaging_base() {
  local pkgs key tar
  pkgs=$(IFS=,; echo "${PACKAGING_BASE_PKGS[*]}")
  key=$(printf '%s\n' bookworm "${PACKAGING_BASE_PKGS[@]}" | sort | tr '\n' ' ')
  tar=$PACKAGING_CACHE/bookworm-$(echo "$key" | sha256sum | cut -c1-12).tar
  debian_root_make "$tar" "$tar.key" "$key" bookworm "$pkgs" \
    "$PACKAGING_CACHE/mmdebstrap.log" || return 1
  echo "$tar"
}
