#!/usr/bin/env bash
# The README's shell snippets, run as written: every ```sh block (in the
# README's order, in one scratch directory) against a fresh
# `cmake --install <build> --prefix P` with P/bin first on PATH, after
# `ompdpu-cc` has something to compile: app.c, the README's ```c block that
# says where a region ran, inside a main(). The rule (tests/README.md): a
# ```sh block must run here; a block that needs a BlueField, a cluster, root
# or most of an hour is a ```shell block; a command that starts with sudo
# (apt, the service) is skipped here and run (as root, without sudo) with
# --installed, in the packaging test's Debian root, where the packages lie in
# the scratch directory and nothing else is installed. Offloading runs
# mandatory and every program run through `ompdpu run` must print "ran on the
# DPU", never "on the host". The ```cmake block is find_package.sh's. About 30 s.
#
#   tests/packaging/readme_snippets.sh BUILD_DIR [README]   (default <repo>/README.md)
#   tests/packaging/readme_snippets.sh --installed DEBS_DIR [README]
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
INSTALLED=""
if [[ ${1:-} == --installed ]]; then
  INSTALLED=$(realpath "${2:?usage: readme_snippets.sh --installed DEBS_DIR [README]}")
  shift
fi
BUILD=$(realpath "${1:?usage: readme_snippets.sh BUILD_DIR [README]}")
README=$(realpath "${2:-$REPO/README.md}")
pass() { printf 'PASS: %s\n' "$*"; }
fail() { printf 'FAIL: readme-snippets: %s\n' "$*"; exit 1; }
[[ -n $INSTALLED || -x $BUILD/bin/ompdpu ]] || fail "$BUILD/bin/ompdpu missing: build the project first"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ompdpu-readme.XXXXXX")
trap 'rm -rf --one-file-system "$WORK"' EXIT

# ---- a fresh prefix, and a user's environment with no DPU configured -----------------
if [[ -z $INSTALLED ]]; then
  PREFIX=$WORK/prefix
  cmake --install "$BUILD" --prefix "$PREFIX" >"$WORK/install.log" 2>&1 ||
    { cat "$WORK/install.log"; fail "cmake --install failed"; }
  export PATH=$PREFIX/bin:$PATH
fi
export XDG_CONFIG_HOME=$WORK/config OMP_TARGET_OFFLOAD=mandatory
unset OMPDPU_DEVICES OMPDPU_CONFIG OMPDPU_KEY OMPDPU_NOTICE OMPDPU_SERVER OMPDPU_PLUGIN_DIR

# ---- the blocks -------------------------------------------------------------------------
python3 "$HERE/readme_blocks.py" "$README" c "$WORK/c" >/dev/null
python3 "$HERE/readme_blocks.py" "$README" sh "$WORK/sh" >"$WORK/sh.list"
[[ -s $WORK/sh.list ]] || fail "README.md has no \`\`\`sh block"
app=$(grep -l 'ran on the DPU' "$WORK"/c/*.c | head -1) ||
  fail "README.md has no \`\`\`c block that prints \"ran on the DPU\""
RUN=$WORK/run
mkdir -p "$RUN"
{
  printf '#include <ompdpu.h>\n#include <stdio.h>\n#include <unistd.h>\n\n'
  printf 'int main(void) {\n'
  cat "$app"
  printf 'return 0;\n}\n'
} >"$RUN/app.c"
# The README's `apt install ./ompdpu_VERSION_amd64.deb` finds them here, and
# apt's question is answered as a user would.
if [[ -n $INSTALLED ]]; then
  cp "$INSTALLED"/*.deb "$RUN/"
  echo 'APT::Get::Assume-Yes "true";' >"$WORK/apt.conf"
  export APT_CONFIG=$WORK/apt.conf DEBIAN_FRONTEND=noninteractive
fi

while read -r n line; do
  block=$WORK/sh/$n.sh script=$WORK/block$n.sh
  # Continuation lines joined; sudo commands skipped by the rule, run as
  # root in the Debian root.
  {
    echo 'set -e'
    sed -e ':a' -e '/\\$/{N;s/\\\n//;ba}' "$block" | while IFS= read -r cmd; do
      if [[ $cmd =~ ^[[:space:]]*sudo[[:space:]]+(.*)$ && -n $INSTALLED ]]; then
        printf '%s\n' "${BASH_REMATCH[1]}"
      elif [[ $cmd =~ ^[[:space:]]*sudo[[:space:]] ]]; then
        printf 'echo %q\n' "skipped (root and apt): $cmd"
      else
        printf '%s\n' "$cmd"
      fi
    done
  } >"$script"
  # stdin an empty pipe: `ompdpu emulate` stops at its end, as for a tool.
  if ! (cd "$RUN" && : | timeout 300 bash -x "$script") >"$WORK/block$n.log" 2>&1; then
    cat "$WORK/block$n.log"
    fail "README.md line $line: the \`\`\`sh block failed (its commands above, with +)"
  fi
  runs=$(grep -cE '^[^#]*ompdpu run .*-- \./app' "$block" || :)
  dpu=$(grep -c 'ran on the DPU' "$WORK/block$n.log" || :)
  if grep -q 'ran on the host' "$WORK/block$n.log" || ((dpu < runs)); then
    cat "$WORK/block$n.log"
    fail "README.md line $line: $runs runs of ./app, $dpu of them said \"ran on the DPU\""
  fi
  skipped=$(grep -c '^+ echo .skipped' "$WORK/block$n.log" || :)
  ((skipped)) && skipped=", sudo lines skipped: $skipped" || skipped=""
  pass "README.md line $line: the \`\`\`sh block ran (runs of ./app on the DPU: $runs$skipped)"
done <"$WORK/sh.list"
