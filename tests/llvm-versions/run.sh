#!/usr/bin/env bash
# The lit end-to-end tests compiled with each LLVM version's own clang and run
# with that version's own libomptarget, under `ompdpu run --emulate` with
# OMP_TARGET_OFFLOAD=mandatory (every test checks that its regions ran in the
# server), plus this directory's checks/ (which libomptarget and which plugin
# file the program loaded).
#
#   tests/llvm-versions/run.sh [--build DIR] [VERSION...]    (default: 15 16)
#   tests/llvm-versions/run.sh [--build DIR] --arm 18|19
#   tests/llvm-versions/run.sh [--build DIR] --print-toolchain VERSION
#
# 14 uses the installed clang-14. 17 and 18 run inside a Debian 13 root file
# system (scripts/debian13-root.sh: their packages need trixie's glibc).
# `ompdpu run` picks each version's plugin directory itself (lib/ompdpu,
# lib/ompdpu/llvm17, llvm18) from the libomptarget the program loads.
# 15 and 16 come from Debian 12's packages
# (clang-N, clang-tools-N, libomp5-N, libomp-N-dev and the libraries they
# need), which conflict with libomp-14-dev: they are fetched with
# `apt-get download` and unpacked with `dpkg -x` into
# $OMPDPU_CACHE/llvm-N/root (default ${XDG_CACHE_HOME:-~/.cache}/ompdpu,
# outside the clone), and reused while apt offers the same package files.
# 19 links its plugins into libomptarget: llvm-patches/build-libomptarget-19.sh
# builds libomptarget 19 with ompdpu's plugin inside (into
# <build>/lib/ompdpu/llvm19, where `ompdpu run` finds it; its build tree is
# cached), programs are compiled with Debian 12's clang-19 and linked against
# Debian's libomp 19 (unpacked beside that cache), which `ompdpu run` replaces.
# Every test of tests/lit/offload runs but those skip-<N>.txt lists, each with
# its reason; with 14 only checks/ runs (lit-e2e runs the suite with clang-14).
# --arm: the real DPU's path instead, with version 18's or 19's toolchain: aarch64 device
# images (scripts/ompdpu-aarch64-cc with this version's clang) run against the aarch64
# server in the arm64 VM (tests/lit-arm/run-lit-arm.sh: one VM for the run, exit 77
# when no VM can run here), OMP_TARGET_OFFLOAD=mandatory, `ompdpu run` picking the
# rebuilt libomptarget 19, or 18's own with lib/ompdpu/llvm18's libomptarget.rtl.cuda.so:
# tests/lit/offload (less lit-arm's own unsupported tests and skip-<v>.txt's, and for 18
# skip-18-arm.txt's) and tests/lit-arm/arm/on_aarch64.c (the region ran on aarch64, in
# the guest). 18 compiles and runs each program inside the Debian 13 root, in the VM's
# network namespace, with trixie's aarch64 binutils and GCC runtime (installed into the
# root on first use) and Debian 12's arm64 libc headers and libraries (the guest's).
# --print-toolchain: only fetch (or reuse) that version's clang, libomp and
# libomptarget (19: also build the rebuilt libomptarget) and print the directory that
# holds lib/ with its libomp and LLVM's own libomptarget (tests/conformance uses it).
# Environment: OMPDPU_BUILD (default build), OMPDPU_CACHE.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$SRC/tests/llvm-versions
BUILD=$(realpath -m "${OMPDPU_BUILD:-$SRC/build}")
CACHE=$(realpath -m "${OMPDPU_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ompdpu}")
VERSIONS=()
ARM=0
PRINT=0
while (($#)); do
  case $1 in
  --build) BUILD=$(realpath -m "${2:?--build needs a directory}"); shift 2 ;;
  --arm) ARM=1; shift ;;
  --print-toolchain) PRINT=1; shift ;;
  -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  1[4-9]) VERSIONS+=("$1"); shift ;;
  *) echo "llvm-versions: unknown argument '$1' (versions: 14 to 19; see --help)" >&2; exit 2 ;;
  esac
done
((${#VERSIONS[@]})) || VERSIONS=(15 16)
if ((ARM)); then
  for v in "${VERSIONS[@]}"; do
    [[ $v == 1[89] ]] || { echo "llvm-versions: --arm runs LLVM 18 and 19, not $v" >&2; exit 2; }
  done
fi
log() { echo "[llvm-versions] $*" >&2; }
die() { echo "llvm-versions: error: $*" >&2; exit 1; }
[[ -x $BUILD/bin/ompdpu ]] || die "no ompdpu in $BUILD/bin: build first (or pass --build DIR)"
LIT=/usr/lib/llvm-14/build/utils/lit/lit.py
[[ -f $LIT ]] || die "no lit at $LIT (scripts/install-deps.sh installs llvm-14-tools)"
# lit's per-test limits need psutil, which Debian's python3 has.
PY=/usr/bin/python3

# Packages of one LLVM version that a private clang and libomptarget need.
packages() { # <version>
  local v=$1
  echo clang-$v clang-tools-$v libclang-cpp$v libllvm$v libclang-common-$v-dev \
    libomp5-$v libomp-$v-dev
}

# Unpack (or reuse) version v's toolchain; prints its llvm-<v> directory.
fetch() { # <version>
  local v=$1 dir=$CACHE/llvm-$v uris
  # The file names apt would download now: a change means a new package.
  uris=$(apt-get download --print-uris $(packages "$v") 2>/dev/null | awk '{print $2}' | sort) ||
    die "apt knows no $(packages "$v") (Debian 12 has them; apt-get update?)"
  [[ -n $uris ]] || die "apt offers none of $(packages "$v")"
  if [[ -f $dir/root/.ompdpu-packages && $(cat "$dir/root/.ompdpu-packages") == "$uris" ]]; then
    log "LLVM $v: reusing $dir/root"
  else
    log "LLVM $v: downloading $(packages "$v") into $dir"
    rm -rf "$dir/debs" "$dir/root"
    mkdir -p "$dir/debs"
    (cd "$dir/debs" && apt-get download -qq $(packages "$v")) >"$dir/download.log" 2>&1 ||
      die "cannot download the LLVM $v packages (log: $dir/download.log)"
    for deb in "$dir"/debs/*.deb; do dpkg -x "$deb" "$dir/root"; done
    # libomptarget and clang find libraries through RUNPATH $ORIGIN (and
    # $ORIGIN/../lib); their LLVM and clang libraries are in the multiarch
    # directory, on no search path of a private unpack: link them in.
    local lib=$dir/root/usr/lib/llvm-$v/lib f
    for f in "$dir"/root/usr/lib/x86_64-linux-gnu/lib*.so*; do
      [[ -e $lib/$(basename "$f") ]] || ln -s "$f" "$lib/$(basename "$f")"
    done
    echo "$uris" >"$dir/root/.ompdpu-packages"
  fi
  echo "$dir"
}

# A clang that links programs against version v's libomp and libomptarget.
make_wrappers() { # <version> <bin dir> <toolchain dir: llvm-<v>, or none>
  local v=$1 bin=$2 root=$3 tool lib clang inc= pre=
  mkdir -p "$bin"
  for tool in clang clang++; do
    if [[ $v == 14 || $v == 17 ]]; then
      clang=/usr/bin/$tool-$v
      lib=/usr/lib/llvm-$v/lib
    elif [[ $v == 19 ]]; then
      # RUNPATH, not RPATH: `ompdpu run`'s libomptarget must come first.
      clang=/usr/bin/$tool-19
      lib=$CACHE/llvm-19/root/usr/lib/llvm-19/lib
      inc="-I$lib/clang/19/include -Wl,--enable-new-dtags"
    elif [[ $v == 18 ]]; then
      # libomp 18, unpacked beside 17's in the Debian 13 root: omp.h too.
      clang=/usr/bin/$tool-18
      lib=/opt/libomp-18/usr/lib/llvm-18/lib
      inc="-I$lib/clang/18/include"
      # --arm: lit runs on this machine (the VM's tools are here), clang in the root.
      if ((ARM)); then
        pre="\"$bin/in-root\" "
        write_in_root "$bin/in-root"
      fi
    else
      clang=$root/root/usr/lib/llvm-$v/bin/$tool
      lib=$root/root/usr/lib/llvm-$v/lib
    fi
    cat >"$bin/$tool" <<EOF
#!/bin/sh
# clang $v, its libomp and libomptarget (written by tests/llvm-versions/run.sh)
exec $pre"$clang" -Wno-unused-command-line-argument $inc -L"$lib" -Wl,-rpath,"$lib" "\$@"
EOF
    chmod +x "$bin/$tool"
  done
}

# A command run in the Debian 13 root from this machine (--arm 18): in the same
# directory, environment and network namespace, with the clone and Debian 12's arm64
# libc (headers and libraries, the guest's) at their own paths, and this machine's UCX
# (1.13, the guest server's) first on the library path: trixie's UCX 1.18 is refused
# by a 1.13 server ("Operation rejected by remote peer").
write_in_root() { # <file>
  local ucx=${1%/*}/ucx-debian12
  rm -rf "$ucx"
  mkdir -p "$ucx"
  cp -a /usr/lib/x86_64-linux-gnu/libuc[mpst]*.so.0* /usr/lib/x86_64-linux-gnu/ucx "$ucx/"
  cat >"$1" <<EOF
#!/bin/sh
# Run a command in the Debian 13 root, here (written by tests/llvm-versions/run.sh)
# (lit's environment has no HOME: the root's cache is named; its TMPDIR is not in the root.)
OMPDPU_CACHE=$CACHE LD_LIBRARY_PATH=$ucx\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH} \\
  exec "$SRC/scripts/debian13-root.sh" \\
  --bind "$SRC" --bind "$BUILD" --bind /usr/aarch64-linux-gnu/include \\
  --bind /usr/aarch64-linux-gnu/lib -- \\
  sh -c 'cd "\$0" && TMPDIR=/tmp TMP=/tmp TEMP=/tmp exec "\$@"' "\$PWD" "\$@"
EOF
  chmod +x "$1"
}

# The Debian 13 root's aarch64 linker and GCC runtime for device images (--arm 18).
root_cross_tools() {
  local pk="binutils-aarch64-linux-gnu libgcc-14-dev-arm64-cross libstdc++-14-dev-arm64-cross"
  "$SRC/scripts/debian13-root.sh" -- sh -c "dpkg -s $pk >/dev/null 2>&1 ||
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \\
      --no-install-recommends $pk; }" >"$CACHE/debian13/cross-tools.log" 2>&1 ||
    die "cannot install $pk into the Debian 13 root (log: $CACHE/debian13/cross-tools.log)"
}

# A lit site configuration: tests/lit's configuration with version v's clang.
write_site() { # <version> <exec root> <test source root> <bin dir>
  local v=$1 exec=$2 tests=$3 bin=$4
  mkdir -p "$exec"
  cat >"$exec/lit.site.cfg.py" <<EOF
# Written by tests/llvm-versions/run.sh: tests/lit's configuration, with the
# clang and libomptarget of LLVM $v.
import os
config.ompdpu_source_root = "$SRC"
config.ompdpu_bin_dir = "$BUILD/bin"
config.ompdpu_lib_dir = "$BUILD/lib"
config.ompdpu_include_dir = "$SRC/runtime/include"
config.ompdpu_llvm_tools_dir = "$(tools_dir "$v")"
config.ompdpu_clang = "$bin/clang"
config.ompdpu_clangxx = "$bin/clang++"
config.ompdpu_python = "$PY"
config.ompdpu_lit_exec_root = "$exec"
lit_config.load_config(config, "$SRC/tests/lit/lit.cfg.py")
config.name = "ompdpu-llvm$v"
config.test_source_root = "$tests"
config.available_features.add("llvm$v")
config.substitutions.insert(0, ("%llvm-major", "$v"))
config.substitutions.insert(0, ("%ompdpu-lib", "$BUILD/lib"))
EOF
}

# FileCheck and the other LLVM tools the tests use: 14's, or, inside the
# Debian 13 root, 17's.
tools_dir() { # <version>
  [[ $1 == 1[78] ]] && echo /usr/lib/llvm-17/bin || echo /usr/lib/llvm-14/bin
}

# Run lit on these paths, inside the Debian 13 root for 17 and 18.
run_lit() { # <version> <path>...
  local v=$1
  shift
  if [[ $v == 1[78] ]]; then
    nice -n 10 "$SRC/scripts/debian13-root.sh" --bind "$SRC" --bind "$BUILD" -- \
      /usr/bin/python3 /usr/lib/llvm-17/build/utils/lit/lit.py -sv -j2 "$@"
  else
    nice -n 10 "$PY" "$LIT" -sv -j2 "$@"
  fi
}

# The tests of tests/lit/offload that version v runs, one name a line: all
# but those skip-<v>.txt names (14: none, lit-e2e runs them all with clang-14).
test_list() { # <version>
  local skip=$HERE/skip-$1.txt t
  [[ $1 == 14 ]] && return 0
  for t in "$SRC"/tests/lit/offload/*.c "$SRC"/tests/lit/offload/*.cpp; do
    t=$(basename "$t")
    [[ -f $skip ]] && sed 's/#.*//; s/[[:space:]]*$//' "$skip" | grep -qxF -- "$t" && continue
    echo "$t"
  done
}

# skip-<v>.txt as a Python dict: test file name -> its reason.
skip_dict() { # <version>
  "$PY" - "$HERE/skip-$1.txt" "$1" <<'PY'
import os, sys
path, v, d = sys.argv[1], sys.argv[2], {}
for line in open(path) if os.path.exists(path) else []:
    name, _, why = line.partition("#")
    if name.strip() and not line.startswith("#"):
        d[name.strip()] = "skip-%s.txt: %s" % (v, why.strip() or "see skip-%s.txt" % v)
print(repr(d))
PY
}

# lit-arm's site configurations for version v: its offload/ suite (tests/lit/offload)
# and arm/ (tests/lit-arm/arm), with that version's clang; skip-<v>.txt's tests are
# reported unsupported, with their reasons.
write_arm_sites() { # <version> <out dir> <bin dir>
  local v=$1 out=$2 bin=$3 suite srcdir unsup run_in=
  unsup=$(skip_dict "$v")
  if [[ $v == 18 ]]; then
    unsup="dict($unsup, **$(skip_dict 18-arm))"
    run_in=$bin/in-root
  fi
  for suite in offload arm; do
    srcdir=$SRC/tests/lit/offload
    [[ $suite == arm ]] && srcdir=$SRC/tests/lit-arm/arm
    mkdir -p "$out/$suite"
    cat >"$out/$suite/lit.site.cfg.py" <<EOF
# Written by tests/llvm-versions/run.sh --arm: tests/lit-arm's configuration, with the
# clang and libomptarget of LLVM $v.
config.ompdpu_source_root = "$SRC"
config.ompdpu_bin_dir = "$BUILD/bin"
config.ompdpu_lib_dir = "$BUILD/lib"
config.ompdpu_include_dir = "$SRC/runtime/include"
config.ompdpu_llvm_tools_dir = "/usr/lib/llvm-14/bin"
config.ompdpu_python = "$PY"
config.ompdpu_arm_suite = "$suite"
config.ompdpu_arm_source = "$srcdir"
config.ompdpu_lit_exec_root = "$out/$suite"
config.ompdpu_arm_llvm = $v
config.ompdpu_arm_clang = "$bin/clang"
config.ompdpu_arm_clangxx = "$bin/clang++"
config.ompdpu_arm_unsupported = $unsup
config.ompdpu_arm_run_in = "$run_in"
lit_config.load_config(config, "$SRC/tests/lit-arm/lit.cfg.py")
config.name = "ompdpu-llvm$v-arm-$suite"
EOF
  done
}

if ((PRINT)); then
  ((${#VERSIONS[@]} == 1)) || die "--print-toolchain takes one version"
  v=${VERSIONS[0]}
  case $v in
  14 | 17 | 18) die "--print-toolchain: $v is not unpacked privately (14: /usr/lib/llvm-14; 17, 18: the Debian 13 root)" ;;
  19) OMPDPU_CACHE=$CACHE "$SRC/llvm-patches/build-libomptarget-19.sh" --build "$BUILD" >&2 ||
    die "cannot build libomptarget 19 with the dpu plugin"
    echo "$CACHE/llvm-19/root/usr/lib/llvm-19" ;;
  *) root=$(fetch "$v") || exit 1; echo "$root/root/usr/lib/llvm-$v" ;;
  esac
  exit 0
fi

fail=0
for v in "${VERSIONS[@]}"; do
  start=$SECONDS
  root=none
  case $v in
  14) ;;
  17 | 18) "$SRC/scripts/debian13-root.sh" --path >/dev/null
    if ((ARM)); then root_cross_tools; fi ;;
  19) [[ -x /usr/bin/clang-19 && -x /usr/lib/llvm-19/bin/clang-offload-packager ]] ||
    die "LLVM 19 needs clang-19 and clang-tools-19 (apt-get install --no-install-recommends)"
    OMPDPU_CACHE=$CACHE "$SRC/llvm-patches/build-libomptarget-19.sh" --build "$BUILD" ||
    die "cannot build libomptarget 19 with the dpu plugin" ;;
  *) root=$(fetch "$v") ;;
  esac
  out=$BUILD/tests/llvm-versions/$v
  make_wrappers "$v" "$out/bin" "$root"
  if ((ARM)); then
    write_arm_sites "$v" "$out/arm" "$out/bin"
    log "LLVM $v: tests/lit/offload and on_aarch64.c in the arm64 VM, aarch64 device images"
    rc=0
    "$SRC/tests/lit-arm/run-lit-arm.sh" --build "$BUILD" --python "$PY" --lit "$LIT" \
      "$out/arm/offload" "$out/arm/arm/on_aarch64.c" || rc=$?
    ((rc == 77)) && exit 77
    if ((rc == 0)); then
      log "LLVM $v (arm64 VM): passed in $((SECONDS - start)) s"
    else
      log "LLVM $v (arm64 VM): FAILED (after $((SECONDS - start)) s)"
      fail=1
    fi
    continue
  fi
  write_site "$v" "$out/suite" "$SRC/tests/lit" "$out/bin"
  write_site "$v" "$out/checks" "$HERE/checks" "$out/bin"
  paths=("$out/checks")
  while read -r t; do
    paths+=("$out/suite/offload/$t")
  done < <(test_list "$v")
  skipped=0
  for t in $(sed 's/#.*//' "$HERE/skip-$v.txt" 2>/dev/null); do
    [[ -f $SRC/tests/lit/offload/$t ]] || die "skip-$v.txt names $t: no tests/lit/offload/$t"
    skipped=$((skipped + 1))
  done
  mkdir -p "$out/suite/offload"
  log "LLVM $v: checks/ and $((${#paths[@]} - 1)) offload tests ($skipped skipped, see skip-$v.txt)"
  if run_lit "$v" "${paths[@]}"; then
    log "LLVM $v: passed in $((SECONDS - start)) s"
  else
    log "LLVM $v: FAILED (after $((SECONDS - start)) s)"
    fail=1
  fi
done
exit $fail
