#!/usr/bin/env bash
# Build a private arm64 (aarch64) sysroot from Debian packages, for cross-building
# ompdpu-server and OpenMP device images for the BlueField-2 DPU on an x86 Debian 12 host.
#
#   scripts/arm64-sysroot.sh [SYSROOT]
#
# SYSROOT defaults to $OMPDPU_ARM64_SYSROOT, else <repo>/build-arm64/sysroot.
# Downloaded .debs are cached in $OMPDPU_ARM64_DEBS (default: <SYSROOT>/../debs), so a
# second run neither downloads nor unpacks anything that has not changed.
#
# What it does (idempotent; every step is skipped when already done):
#   1. installs the host cross toolchain (gcc/g++-aarch64-linux-gnu, libc6-dev-arm64-cross,
#      clang-14, lld-14, llvm-14, ...);
#   2. `dpkg --add-architecture arm64` + `apt-get update`, only if arm64 lists are missing;
#   3. `apt-get download`s the arm64 libraries the server links against (UCX, libffi,
#      libelf, libomp, zlib) and their library dependencies, minus what the Debian cross
#      toolchain already provides (libc, libgcc, libstdc++);
#   4. unpacks them with `dpkg -x` into SYSROOT and repairs what that leaves broken:
#      absolute symlinks are made relative (inside SYSROOT), an unversioned libomp.so
#      is added, and <SYSROOT>/pkgconfig.env sets up pkg-config for the sysroot.
#
# Extra arm64 packages: OMPDPU_ARM64_EXTRA_PKGS="libfoo-dev libbar1".
# Use the result through cmake/aarch64-linux-gnu.cmake (it reads the same SYSROOT), or
# for pkg-config by hand: `. <SYSROOT>/pkgconfig.env; pkg-config --cflags ucx`.
set -euo pipefail

log()  { printf '[arm64-sysroot] %s\n' "$*" >&2; }
die()  { printf '[arm64-sysroot] ERROR: %s\n' "$*" >&2; exit 1; }

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SYSROOT=${1:-${OMPDPU_ARM64_SYSROOT:-$REPO/build-arm64/sysroot}}
mkdir -p "$SYSROOT" || die "cannot create sysroot directory $SYSROOT"
SYSROOT=$(cd "$SYSROOT" && pwd)
DEBS=${OMPDPU_ARM64_DEBS:-$(dirname "$SYSROOT")/debs}
mkdir -p "$DEBS" || die "cannot create .deb cache directory $DEBS"
DEBS=$(cd "$DEBS" && pwd)
MULTIARCH=aarch64-linux-gnu

# arm64 packages we want (the closure of their library dependencies is added).
SEED_PKGS=(libucx0 libucx-dev libffi8 libffi-dev libelf1 libelf-dev zlib1g zlib1g-dev
           libomp5-14 libseccomp2 libseccomp-dev libsodium23 libsodium-dev
           libmunge2 libmunge-dev libsystemd0 libsystemd-dev
           # libomptarget.so: arm64 host programs (the RDMA testbed runs them in the VM)
           libomp-14-dev)
read -r -a extra <<<"${OMPDPU_ARM64_EXTRA_PKGS:-}"
SEED_PKGS+=("${extra[@]+"${extra[@]}"}")
# Provided by the Debian cross toolchain (/usr/aarch64-linux-gnu), or not needed to link:
# never downloaded, and their dependencies are not followed.
EXCLUDE_PKGS=" libc6 libc6-dev libc-dev libgcc-s1 libgcc-12-dev libstdc++6 libstdc++-12-dev
  gcc-12-base libcrypt1 libcrypt-dev linux-libc-dev libatomic1 libasan8 libubsan1 libtsan2
  liblsan0 libitm1 libhwasan0 libllvm14 debconf adduser perl-base dpkg libselinux1 "

# Host tools: the cross compilers (for libc/libgcc/crt files), clang-14 + lld for the
# build itself, llvm-14 for llvm-objcopy/readelf, file for the checks.
HOST_PKGS=(gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross
           clang-14 clang-tools-14 lld-14 llvm-14 libomp-14-dev dpkg-dev pkg-config
           binutils file cmake ninja-build)

APT_OPTS=(-o DPkg::Lock::Timeout=600 -o APT::Sandbox::User=root)

need_root() {
  [ "$(id -u)" = 0 ] || die "$1 needs root (or run this script once as root)"
}

apt_update() {
  need_root "apt-get update"
  log "apt-get update"
  # A third-party source that cannot be reached makes apt-get update exit non-zero
  # while the Debian lists are fine: judge by the result, not by the exit code.
  local tries=0
  until apt-get "${APT_OPTS[@]}" update -qq >"$DEBS/apt-update.log" 2>&1; do
    if grep -q 'Could not get lock' "$DEBS/apt-update.log" && [ $((tries += 1)) -lt 30 ]; then
      sleep 10; continue                     # someone else is running apt: wait
    fi
    log "apt-get update reported errors (see $DEBS/apt-update.log); continuing"
    break
  done
}

# ---- 1. host packages ---------------------------------------------------------------
missing=()
for p in "${HOST_PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  need_root "installing host packages (${missing[*]})"
  log "installing host packages: ${missing[*]}"
  if ! DEBIAN_FRONTEND=noninteractive apt-get "${APT_OPTS[@]}" install -y -qq --no-install-recommends \
        "${missing[@]}" >"$DEBS/apt-install.log" 2>&1; then
    apt_update
    DEBIAN_FRONTEND=noninteractive apt-get "${APT_OPTS[@]}" install -y -qq --no-install-recommends \
        "${missing[@]}" >"$DEBS/apt-install.log" 2>&1 \
      || { tail -n 20 "$DEBS/apt-install.log" >&2; die "apt-get install ${missing[*]} failed (log: $DEBS/apt-install.log)"; }
  fi
fi

# ---- 2. arm64 architecture + package lists ------------------------------------------
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  need_root "dpkg --add-architecture arm64"
  log "dpkg --add-architecture arm64"
  dpkg --add-architecture arm64
fi
# (a file test: any apt-cache call costs ~1.5 s here; the real check follows in step 3)
have_arm64_lists() { compgen -G '/var/lib/apt/lists/*_binary-arm64_Packages*' >/dev/null; }
if ! have_arm64_lists; then
  apt_update
  have_arm64_lists || die "no arm64 package lists after apt-get update (see $DEBS/apt-update.log);
  is an arm64-capable Debian mirror in /etc/apt/sources.list*?"
fi

# ---- 3. resolve the package closure (cached) -------------------------------------------
# Every apt-cache/apt-get call costs ~1.5 s here (no pkgcache.bin), so the resolved list
# of .debs is kept in $DEBS/closure.txt, keyed by the package lists and our package sets.
is_excluded() { case "$EXCLUDE_PKGS" in *" $1 "*) return 0;; esac; return 1; }

resolve_closure() {
  local -A seen=()
  local want=() frontier=() next=() cand=() p dep arch
  for p in "${SEED_PKGS[@]}"; do seen[$p]=1; want+=("$p"); frontier+=("$p:arm64"); done
  while [ ${#frontier[@]} -gt 0 ]; do
    # Depends/PreDepends of the frontier; of alternatives ("|Depends: a" then
    # " Depends: b") the first is taken; <virtual> names are skipped.
    cand=()
    while read -r dep; do
      dep=${dep%:arm64}; dep=${dep%:any}
      [ -n "${seen[$dep]:-}" ] && continue
      seen[$dep]=1
      is_excluded "$dep" || cand+=("$dep")
    done < <(apt-cache depends --no-recommends --no-suggests --no-conflicts --no-breaks \
                --no-replaces --no-enhances "${frontier[@]}" 2>/dev/null \
             | awk '/^[^ ]/ {alt=0; next}
                    /^ *\|?(Pre)?Depends: / {
                       isalt = ($1 ~ /^\|/); if (!alt && $2 !~ /^</) print $2
                       alt = isalt }')
    next=()
    if [ ${#cand[@]} -gt 0 ]; then
      # One apt-cache show for the whole level: skip Architecture: all (scripts, data).
      declare -A archof=()
      while read -r p arch; do archof[$p]=$arch; done < <(
        apt-cache show --no-all-versions "${cand[@]/%/:arm64}" 2>/dev/null \
        | awk '/^Package: /{p=$2} /^Architecture: /{print p, $2}')
      for dep in "${cand[@]}"; do
        [ -n "${archof[$dep]:-}" ] || die "arm64 package $dep (needed by ${SEED_PKGS[*]}) not found"
        [ "${archof[$dep]}" = all ] && continue
        want+=("$dep"); next+=("$dep:arm64")
      done
      unset archof
    fi
    frontier=("${next[@]+"${next[@]}"}")
  done
  log "arm64 packages: ${want[*]}"
  # --print-uris gives each .deb's URL, file name and size without downloading anything
  # (and says nothing of a .deb already in the current directory: run it in an empty one).
  local tmp; tmp=$(mktemp -d)
  (cd "$tmp" && apt-get "${APT_OPTS[@]}" download --print-uris "${want[@]/%/:arm64}") \
    || { rmdir "$tmp"; die "apt-get download --print-uris failed for: ${want[*]}"; }
  rmdir "$tmp"
}

key=$( { echo "${SEED_PKGS[*]}|$EXCLUDE_PKGS"; dpkg --print-foreign-architectures;
         stat -c '%n %s %Y' /var/lib/apt/lists/*_binary-arm64_Packages* 2>/dev/null; } | md5sum | cut -d' ' -f1)
if [ -f "$DEBS/closure.txt" ] && [ "$(head -n1 "$DEBS/closure.txt")" = "$key" ]; then
  uris=$(tail -n +2 "$DEBS/closure.txt")
else
  uris=$(resolve_closure)
  { echo "$key"; echo "$uris"; } >"$DEBS/closure.txt.tmp" && mv "$DEBS/closure.txt.tmp" "$DEBS/closure.txt"
fi

# ---- 4. download (cached) ------------------------------------------------------------
to_get=(); files=()
while read -r _url file size _hash; do
  [ -n "$file" ] || continue
  files+=("$file")
  if [ -s "$DEBS/$file" ] && [ "$(stat -c %s "$DEBS/$file")" = "$size" ]; then continue; fi
  to_get+=("${file%%_*}:arm64")
done <<<"$uris"
[ ${#files[@]} -gt 0 ] || { rm -f "$DEBS/closure.txt"; die "no arm64 packages resolved"; }
if [ ${#to_get[@]} -gt 0 ]; then
  log "downloading ${#to_get[@]} .deb(s) into $DEBS"
  (cd "$DEBS" && apt-get "${APT_OPTS[@]}" download -qq "${to_get[@]}") \
    || die "apt-get download failed for: ${to_get[*]}"
fi

# ---- 5. unpack into the sysroot (only what changed) ------------------------------------
stamp_dir=$SYSROOT/.ompdpu-unpacked
# A package set that changed (new Debian point release, other packages): start the sysroot
# afresh rather than leave files of old versions in it. Only a directory this script made
# (it holds $stamp_dir) is ever emptied.
if [ -d "$stamp_dir" ]; then
  for st in "$stamp_dir"/*; do
    [ -e "$st" ] || continue
    case " ${files[*]} " in *" ${st##*/} "*) continue;; esac
    log "package set changed (${st##*/} no longer wanted): rebuilding $SYSROOT"
    find "$SYSROOT" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
    break
  done
  for deb in "$DEBS"/*.deb; do             # drop .debs no longer wanted from the cache
    [ -e "$deb" ] || continue
    case " ${files[*]} " in *" ${deb##*/} "*) ;; *) rm -f "$deb";; esac
  done
fi
mkdir -p "$stamp_dir"
changed=0
for f in "${files[@]}"; do
  [ -f "$DEBS/$f" ] || die "expected $DEBS/$f after download"
  [ -e "$stamp_dir/$f" ] && continue
  log "unpacking $f"
  dpkg -x "$DEBS/$f" "$SYSROOT" || die "dpkg -x $DEBS/$f failed"
  : >"$stamp_dir/$f"; changed=1
done

# ---- 6. repair what dpkg -x leaves broken for linking -------------------------------------
if [ $changed = 1 ] || [ ! -f "$SYSROOT/pkgconfig.env" ]; then
  # Merged /usr (Debian 12, and the DPU's OS): keep lib/ and usr/lib/ one directory.
  if [ -d "$SYSROOT/lib" ] && [ ! -L "$SYSROOT/lib" ]; then
    mkdir -p "$SYSROOT/usr/lib"
    cp -a "$SYSROOT/lib/." "$SYSROOT/usr/lib/" && rm -rf "${SYSROOT:?}/lib"
  fi
  [ -e "$SYSROOT/lib" ] || ln -s usr/lib "$SYSROOT/lib"

  # Absolute symlinks (e.g. usr/lib/<triple>/libz.so -> /lib/<triple>/libz.so.1.2.13) point
  # at the host: make them relative, inside the sysroot (/lib/... is /usr/lib/... here).
  while IFS= read -r -d '' link; do
    target=$(readlink "$link")
    case "$target" in /lib/*) target=/usr$target;; /*) ;; *) continue;; esac
    ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$SYSROOT$target")" "$link"
  done < <(find "$SYSROOT" -type l -print0)

  # libomp5-14 ships only libomp.so.5; the linker wants libomp.so (libomp-14-dev:arm64,
  # unpacked without its libllvm14, brings it under llvm-14/lib only).
  libdir=$SYSROOT/usr/lib/$MULTIARCH
  [ -e "$libdir/libomp.so.5" ] || die "libomp.so.5 missing from $libdir after unpacking libomp5-14"
  [ -e "$libdir/libomp.so" ] || ln -sfn libomp.so.5 "$libdir/libomp.so"
  if [ -e "$SYSROOT/usr/lib/llvm-14/lib/libomp.so.5" ] && [ ! -e "$SYSROOT/usr/lib/llvm-14/lib/libomp.so" ]; then
    ln -sfn libomp.so.5 "$SYSROOT/usr/lib/llvm-14/lib/libomp.so"
  fi

  # pkg-config: the .pc files say prefix=/usr; PKG_CONFIG_SYSROOT_DIR prefixes -I/-L with
  # the sysroot and PKG_CONFIG_LIBDIR keeps the host's .pc files out. pkgconf drops
  # -I/usr/include and -L/usr/lib... as "system" paths before adding the sysroot, which
  # would lose them: point its system-path lists somewhere harmless.
  cat >"$SYSROOT/pkgconfig.env" <<EOF
# Generated by scripts/arm64-sysroot.sh: source it to use pkg-config against the sysroot.
export PKG_CONFIG_SYSROOT_DIR='$SYSROOT'
export PKG_CONFIG_LIBDIR='$SYSROOT/usr/lib/$MULTIARCH/pkgconfig:$SYSROOT/usr/lib/pkgconfig:$SYSROOT/usr/share/pkgconfig'
export PKG_CONFIG_PATH=
export PKG_CONFIG_SYSTEM_INCLUDE_PATH=/nonexistent-ompdpu
export PKG_CONFIG_SYSTEM_LIBRARY_PATH=/nonexistent-ompdpu
EOF
fi

# ---- 7. check --------------------------------------------------------------------------------
(
  # shellcheck disable=SC1091
  . "$SYSROOT/pkgconfig.env"
  for m in ucx libffi libelf zlib; do
    pkg-config --exists "$m" || die "pkg-config cannot find $m in the sysroot ($PKG_CONFIG_LIBDIR)"
  done
)
for lib in libucp.so libuct.so libucs.so libffi.so libelf.so libz.so libomp.so; do
  f=$SYSROOT/usr/lib/$MULTIARCH/$lib
  [ -e "$f" ] || die "$f missing or a dangling symlink"
  LC_ALL=C readelf -h "$f" 2>/dev/null | grep -q 'Machine:.*AArch64' || die "$f is not an AArch64 ELF file"
done
log "sysroot ready: $SYSROOT (debs cached in $DEBS)"
echo "$SYSROOT"
