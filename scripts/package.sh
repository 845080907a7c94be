#!/usr/bin/env bash
# Build the Debian packages of ompdpu with CPack's DEB generator (the install
# rules already describe the layout; CPack runs dpkg-shlibdeps for Depends):
#   ompdpu_<v>_amd64.deb          host side: plugin, libompdpu, ompdpu, wrappers,
#                                 CMake package (and the emulated DPUs' server)
#   ompdpu-server_<v>_amd64.deb   DPU side for x86_64 (emulation, testing)
#   ompdpu-server_<v>_arm64.deb   DPU side for a BlueField (cross-built)
# then checks them with lintian (overrides: packaging/*/lintian-overrides).
#
#   scripts/package.sh [--no-arm64] [--out DIR]
# Environment: OMPDPU_PKG_BUILD (default <repo>/build-pkg), JOBS (default 2),
# and those of scripts/cross-build-aarch64.sh. DIR defaults to $OMPDPU_PKG_BUILD/debs.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${OMPDPU_PKG_BUILD:-$REPO/build-pkg}
ARM64_BUILD=${OMPDPU_ARM64_BUILD:-$REPO/build-arm64}/server
JOBS=${JOBS:-2}
OUT=
arm64=1
log() { printf '[package] %s\n' "$*" >&2; }
die() { printf '[package] error: %s\n' "$*" >&2; exit 1; }
while (($#)); do
  case $1 in
  --no-arm64) arm64=0 ;;
  --out) OUT=${2:?--out needs a directory}; shift ;;
  -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  *) die "unknown option $1" ;;
  esac
  shift
done
OUT=$(realpath -m "${OUT:-$BUILD/debs}")
TARGETS=(ompdpu-server ompdpu-cli ompdpu ompdpu-plugins ompdpu-device-stubs ompdpu-no-dpu-notice)
# Packages are made from what the install rules name, not the whole build
# (tests, benchmarks): only the packaged targets are built.
CONFIG=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr
  -DCMAKE_SKIP_INSTALL_ALL_DEPENDENCY=ON)

# ---- amd64: host package and server package ---------------------------------------------
t0=$(date +%s)
gen=()
[[ -f $BUILD/CMakeCache.txt ]] || gen=(-G Ninja)
mkdir -p "$BUILD"
cmake -S "$REPO" -B "$BUILD" "${gen[@]}" "${CONFIG[@]}" >"$BUILD/package-configure.log" 2>&1 ||
  { tail -20 "$BUILD/package-configure.log" >&2; die "configure failed (log: $BUILD/package-configure.log)"; }
grep -q '^ompdpu_mpi:' <(cmake --build "$BUILD" --target help 2>/dev/null | sed 's/ .*//') &&
  TARGETS+=(ompdpu_mpi)
nice -n 10 cmake --build "$BUILD" -j "$JOBS" --target "${TARGETS[@]}" >"$BUILD/package-build.log" 2>&1 ||
  { tail -20 "$BUILD/package-build.log" >&2; die "build failed (log: $BUILD/package-build.log)"; }
rm -rf "$BUILD/_CPack_Packages" "$BUILD"/*.deb
(cd "$BUILD" && cpack -G DEB) >"$BUILD/cpack.log" 2>&1 ||
  { tail -20 "$BUILD/cpack.log" >&2; die "cpack failed (log: $BUILD/cpack.log)"; }
mkdir -p "$OUT"
rm -f "$OUT"/*.deb
mv "$BUILD"/*.deb "$OUT"/
log "amd64 packages in $(($(date +%s) - t0)) s"

# ---- arm64: the server package, from the cross build -------------------------------------
# dpkg-shlibdeps cannot resolve arm64 libraries on this host. The arm64
# server needs the same sonames as the amd64 one (same sources, same Debian
# release): its Depends are the amd64 server's entries for the packages that
# own the sonames it needs.
arm64_depends() {  # amd64 server .deb, arm64 server binary
  local deb=$1 exe=$2 soname pkg owners=() dep out=()
  for soname in $(LC_ALL=C readelf -dW "$exe" | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p'); do
    pkg=$(dpkg -S "*/x86_64-linux-gnu/$soname" 2>/dev/null | head -n1 | sed 's/[:,].*//') ||
      true
    [[ -n $pkg ]] || die "no Debian package provides $soname (needed by $exe)"
    owners+=("$pkg")
  done
  while read -r dep; do
    for pkg in "${owners[@]}"; do
      [[ ${dep%% *} == "$pkg" ]] && { out+=("$dep"); break; }
    done
  done < <(dpkg-deb -f "$deb" Depends | tr ',' '\n' | sed 's/^ *//')
  local joined
  joined=$(IFS=,; echo "${out[*]}")
  echo "${joined//,/, }"
}
if ((arm64)); then
  t1=$(date +%s)
  bash "$REPO/scripts/cross-build-aarch64.sh" >"$BUILD/cross-build.log" 2>&1 ||
    { tail -20 "$BUILD/cross-build.log" >&2; die "cross build failed (log: $BUILD/cross-build.log)"; }
  depends=$(arm64_depends "$(ls "$OUT"/ompdpu-server_*_amd64.deb)" "$ARM64_BUILD/bin/ompdpu-server")
  log "arm64 server Depends: $depends"
  cmake -S "$REPO" -B "$ARM64_BUILD" "${CONFIG[@]}" -DOMPDPU_SERVER_DEPENDS="$depends" >/dev/null
  nice -n 10 cmake --build "$ARM64_BUILD" -j "$JOBS" --target ompdpu-server >/dev/null
  rm -rf "$ARM64_BUILD/_CPack_Packages" "$ARM64_BUILD"/*.deb
  (cd "$ARM64_BUILD" && cpack -G DEB) >"$BUILD/cpack-arm64.log" 2>&1 ||
    { tail -20 "$BUILD/cpack-arm64.log" >&2; die "cpack (arm64) failed (log: $BUILD/cpack-arm64.log)"; }
  mv "$ARM64_BUILD"/*.deb "$OUT"/
  log "arm64 package in $(($(date +%s) - t1)) s"
fi

# ---- lintian ---------------------------------------------------------------------------------
command -v lintian >/dev/null || die "no lintian (scripts/install-deps.sh installs it)"
lintian --fail-on error,warning "$OUT"/*.deb >"$OUT/lintian.txt" 2>&1 ||
  { cat "$OUT/lintian.txt" >&2; die "lintian reports problems (above; $OUT/lintian.txt)"; }
log "lintian: clean; packages in $OUT:"
ls "$OUT"/*.deb
