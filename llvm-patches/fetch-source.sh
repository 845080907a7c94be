#!/usr/bin/env bash
# Fetch (or reuse) the Debian source package the installed LLVM's libomptarget
# was built from, check it, and print where it is or unpack parts of it.
#
#   llvm-patches/fetch-source.sh                  print KEY=VALUE lines:
#       SRC_PKG, SRC_VER, UPSTREAM_VER, DSC, ORIG (the .orig tarball), DEBIAN
#       (the .debian tarball), CACHE
#   llvm-patches/fetch-source.sh --unpack DIR SUBTREE...
#       unpack the SUBTREEs (directories or files of the LLVM tree, such as
#       openmp/libomptarget/test) of the .orig tarball into DIR (DIR/SUBTREE),
#       then apply those of Debian's own patches (debian/patches/series) that
#       touch them; DIR is left alone when it already holds the same
#       SUBTREEs of the same source version. Prints DIR.
#
# The source is the exact installed version of the package that built
# libomp5-<major> (`apt-get source --download-only`, with apt's signature and
# checksum checks; deb-src entries are derived from the machine's deb entries
# into a private apt state, nothing system-wide changes; about 130 MB). The
# files are kept in $OMPDPU_LLVM_SRC_CACHE (default:
# ${XDG_CACHE_HOME:-$HOME/.cache}/ompdpu/llvm-src, outside any clone, so a
# clean clone reuses them) and checked against the .dsc's SHA-256 sums every
# time they are reused.
#
# With OMPDPU_LLVM_ROOT_FS (a Debian root file system such as
# scripts/debian13-root.sh's), the package and version are those installed in
# that root (libomp5-<major>, its t64 name, or clang-<major>) and the deb-src
# entries are the twins of the root's own deb entries (Debian 13's, for LLVM
# 17 and 18), fetched with this machine's apt, whose keyring has trixie's keys.
#
# Environment: OMPDPU_LLVM_MAJOR (default 14), OMPDPU_LLVM_SRC_CACHE,
# OMPDPU_LLVM_ROOT_FS.
# Messages go to stderr; stdout carries only the answer.
set -euo pipefail
log() { echo "[fetch-source] $*" >&2; }
die() { echo "fetch-source: error: $*" >&2; exit 1; }

UNPACK_DIR=
SUBTREES=()
case ${1:-} in
'') ;;
--unpack)
  [[ $# -ge 3 ]] || die "usage: $0 --unpack DIR SUBTREE..."
  UNPACK_DIR=$(realpath -m "$2")
  shift 2
  SUBTREES=("${@%/}")
  ;;
-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
*) die "unknown argument '$1' (see --help)" ;;
esac

MAJOR=${OMPDPU_LLVM_MAJOR:-14}
BIN_PKG=libomp5-$MAJOR
CACHE=$(realpath -m "${OMPDPU_LLVM_SRC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ompdpu/llvm-src}")
ROOT_FS=${OMPDPU_LLVM_ROOT_FS:+$(realpath -m "$OMPDPU_LLVM_ROOT_FS")}
if [[ -n $ROOT_FS ]]; then
  [[ -d $ROOT_FS/var/lib/dpkg ]] || die "OMPDPU_LLVM_ROOT_FS=$ROOT_FS is not a Debian root file system"
  # trixie renamed libomp5-N to libomp5-Nt64; 18's libomp is unpacked, not
  # installed, in scripts/debian13-root.sh's root: clang-N has the same source.
  for p in libomp5-$MAJOR libomp5-${MAJOR}t64 clang-$MAJOR; do
    read -r SRC_PKG SRC_VER < <(dpkg-query --admindir="$ROOT_FS/var/lib/dpkg" -W \
      -f='${db:Status-Abbrev} ${source:Package} ${source:Version}\n' "$p" 2>/dev/null |
      awk '$1 == "ii" {print $2, $3}') && break
  done
  [[ -n ${SRC_VER:-} ]] || die "none of libomp5-$MAJOR(t64), clang-$MAJOR is installed in $ROOT_FS"
# The installed package's source; a version not installed (19's libomp
# conflicts with 14's): the one apt would install, its source's version when
# the binary's differs (a binNMU: 15's 1:15.0.6-4+b1 is built from 1:15.0.6-4).
elif read -r SRC_PKG SRC_VER < <(dpkg-query -W -f='${source:Package} ${source:Version}\n' "$BIN_PKG" 2>/dev/null); then
  :
else
  read -r SRC_PKG SRC_VER < <(apt-cache show --no-all-versions "$BIN_PKG" 2>/dev/null |
    awk '/^Source:/ {s = $2; if ($3 ~ /^\(/) {sv = $3; gsub(/[()]/, "", sv)}} /^Version:/ {v = $2}
      END {if (sv != "") v = sv; if (v != "") print (s == "" ? "'"$BIN_PKG"'" : s), v}') ||
  die "$BIN_PKG is neither installed nor known to apt (scripts/install-deps.sh installs it)"
fi
UPSTREAM_VER=${SRC_VER#*:}      # drop the epoch
UPSTREAM_VER=${UPSTREAM_VER%-*} # and the Debian revision
DSC=$CACHE/${SRC_PKG}_${SRC_VER#*:}.dsc

# ---- fetch (or reuse) --------------------------------------------------------
# Without a .dsc (below): <name>.sums, the same Checksums-Sha256 field, taken
# from the Sources index that apt checked against the suite's signed Release.
SUMS=${DSC%.dsc}.sums
verify_cached() {
  local f=$DSC
  [[ -f $f ]] || f=$SUMS
  [[ -f $f ]] || return 1
  # Checksums-Sha256 lines of the .dsc: " <sha256> <size> <file>"
  local n=0 sum file
  while read -r sum _ file; do
    [[ -f $CACHE/$file ]] || return 1
    echo "$sum  $CACHE/$file" | sha256sum --quiet -c - >/dev/null 2>&1 || return 1
    n=$((n + 1))
  done < <(awk '/^Checksums-Sha256:/{f=1; next} /^[^ ]/{f=0} f && NF==3' "$f")
  ((n > 0)) || return 1
  DSC=$f
}
fetch_source() {
  local apt=$CACHE/apt
  mkdir -p "$apt/lists/partial" "$apt/sources.list.d" "$apt/cache/archives/partial"
  : >"$apt/sources.list"
  rm -f "$apt/sources.list.d"/*
  # deb-src twins of the machine's (or the root's) own deb entries (one-line
  # and deb822).
  for f in "$ROOT_FS"/etc/apt/sources.list "$ROOT_FS"/etc/apt/sources.list.d/*.list; do
    [[ -f $f ]] && sed -n 's/^deb \(.*\)$/deb-src \1/p' "$f" >>"$apt/sources.list"
  done
  for f in "$ROOT_FS"/etc/apt/sources.list.d/*.sources; do
    [[ -f $f ]] && sed 's/^Types:.*$/Types: deb-src/' "$f" >"$apt/sources.list.d/$(basename "$f")"
  done
  local opts=(-o "Dir::Etc::sourcelist=$apt/sources.list" -o "Dir::Etc::sourceparts=$apt/sources.list.d"
    -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o "APT::Sandbox::User=root")
  log "apt-get update (deb-src lists, private to $apt)"
  apt-get "${opts[@]}" update -qq >"$apt/update.log" 2>&1 ||
    log "apt-get update reported errors (see $apt/update.log); trying the download anyway"
  log "apt-get source --download-only $SRC_PKG=$SRC_VER (about 130 MB)"
  (cd "$CACHE" && apt-get "${opts[@]}" source --download-only -qq "$SRC_PKG=$SRC_VER") \
    >"$apt/source.log" 2>&1 && return 0
  # Some mirrors serve trixie's source tarballs but not their .dsc (404): take
  # the sums apt has from the signed Sources index and fetch the other files
  # with apt's own downloader, which checks each against its sum.
  grep -q "${SRC_PKG}_${SRC_VER#*:}\.dsc  *404" "$apt/source.log" ||
    die "cannot download the source of $SRC_PKG $SRC_VER: $(tail -n 3 "$apt/source.log" | tr '\n' ' ')(log: $apt/source.log)"
  log "the mirror has no $(basename "$DSC"): the files' sums from the signed Sources index"
  local uris uri file size sum
  uris=$(apt-get "${opts[@]}" source --print-uris -qq "$SRC_PKG=$SRC_VER" | grep -v "\.dsc' ") ||
    die "apt-get source --print-uris $SRC_PKG=$SRC_VER failed"
  { echo "Checksums-Sha256:"; awk '{sub(/^SHA256:/, "", $4); print " " $4, $3, $2}' <<<"$uris"; } >"$SUMS.tmp"
  while read -r uri file size sum; do
    uri=${uri//\'/}
    echo "${sum#SHA256:}  $CACHE/$file" | sha256sum --quiet -c - >/dev/null 2>&1 && continue
    log "apt-helper download-file $file ($((size / 1000000)) MB)"
    rm -f "$CACHE/$file"
    /usr/lib/apt/apt-helper "${opts[@]}" download-file "$uri" "$CACHE/$file" "$sum" >>"$apt/source.log" 2>&1 ||
      die "cannot download $uri (log: $apt/source.log)"
  done <<<"$uris"
  mv "$SUMS.tmp" "$SUMS"
}
mkdir -p "$CACHE"
if verify_cached; then
  log "$SRC_PKG $SRC_VER: using the checked source in $CACHE"
else
  fetch_source
  verify_cached || die "$DSC (or $(basename "$SUMS")): the downloaded files do not match their SHA-256 sums"
fi
ORIG=$(ls "$CACHE"/"${SRC_PKG}_${UPSTREAM_VER}".orig.tar.* 2>/dev/null | head -n 1)
DEBIAN=$(ls "$CACHE"/"${SRC_PKG}_${SRC_VER#*:}".debian.tar.* 2>/dev/null | head -n 1)
[[ -n $ORIG ]] || die "no ${SRC_PKG}_${UPSTREAM_VER}.orig.tar.* in $CACHE"

if [[ -z $UNPACK_DIR ]]; then
  printf '%s=%s\n' SRC_PKG "$SRC_PKG" SRC_VER "$SRC_VER" UPSTREAM_VER "$UPSTREAM_VER" \
    DSC "$DSC" ORIG "$ORIG" DEBIAN "$DEBIAN" CACHE "$CACHE"
  exit 0
fi

# ---- unpack SUBTREEs, with Debian's patches to them --------------------------
STAMP="$SRC_PKG $SRC_VER $(sha256sum "$DSC" | cut -d' ' -f1) ${SUBTREES[*]}"
if [[ $(cat "$UNPACK_DIR/.fetch-source.stamp" 2>/dev/null) == "$STAMP" ]]; then
  log "${SUBTREES[*]} of $SRC_PKG $SRC_VER already unpacked in $UNPACK_DIR"
  echo "$UNPACK_DIR"
  exit 0
fi
rm -rf "$UNPACK_DIR"
mkdir -p "$UNPACK_DIR"
log "unpacking ${SUBTREES[*]} from $(basename "$ORIG")"
tar -xf "$ORIG" -C "$UNPACK_DIR" --strip-components=1 --wildcards "${SUBTREES[@]/#/*/}" >&2 ||
  die "cannot unpack ${SUBTREES[*]} from $ORIG"
if [[ -n $DEBIAN ]]; then
  deb=$UNPACK_DIR/.debian
  mkdir -p "$deb"
  tar -xf "$DEBIAN" -C "$deb" debian/patches || die "cannot unpack debian/patches from $DEBIAN"
  series=$deb/debian/patches/series
  n=0
  # Apply, in series order, the file sections of Debian's patches that touch
  # one of the SUBTREEs (a patch may touch other parts of the tree too).
  re=$(printf '%s|' "${SUBTREES[@]}")
  re="^[+][+][+] [^/]+/(${re%|})([/[:space:]]|\$)"
  while read -r p _; do
    [[ -z $p || $p == \#* ]] && continue
    pf=$deb/debian/patches/$p
    [[ -f $pf ]] || continue
    part=$(awk -v re="$re" '{ l[NR] = $0 }
      END { keep = 0
        for (i = 1; i <= NR; i++) {
          if (l[i] ~ /^--- / && l[i + 1] ~ /^\+\+\+ /) keep = (l[i + 1] ~ re)
          if (keep) print l[i] } }' "$pf")
    [[ -n $part ]] || continue
    log "applying Debian's $p (its part in ${SUBTREES[*]})"
    patch -d "$UNPACK_DIR" -p1 --forward --batch --quiet --no-backup-if-mismatch <<<"$part" >&2 ||
      die "Debian's patch $p does not apply to ${SUBTREES[*]}"
    n=$((n + 1))
  done <"$series"
  rm -rf "$deb"
  log "$n of Debian's patches touch ${SUBTREES[*]}"
fi
echo "$STAMP" >"$UNPACK_DIR/.fetch-source.stamp"
echo "$UNPACK_DIR"
