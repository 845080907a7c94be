# Sourced by the cluster tests: NAME is the test's name (messages), then
#   BUILD, TB (the testbed script), RUN (its state), WORK (a temporary directory,
#   removed with the testbed at exit), say/skip/fail/step, FAILS.
# Exit 77 (skipped) when this machine cannot make namespaces.
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BUILD=${OMPDPU_BUILD_DIR:-$REPO/build}
[ "${1:-}" = --build ] && BUILD=$2
export OMPDPU_BUILD_DIR=$BUILD
TB=$REPO/scripts/ompdpu-testbed
RUN=/run/ompdpu-testbed

say() { echo "$NAME: $*"; }
skip() { say "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "not root: the testbed needs network namespaces"
for t in ip unshare nsenter; do command -v $t >/dev/null || skip "no $t"; done
ip netns list >/dev/null 2>&1 || skip "ip netns does not work here"
[ -x "$BUILD/bin/ompdpu-server" ] || { say "FAIL: no $BUILD/bin/ompdpu-server"; exit 1; }

WORK=$(mktemp -d "/tmp/$NAME.XXXXXX")
chmod 755 "$WORK"
trap '"$TB" down >/dev/null 2>&1; rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM HUP
FAILS=0
fail() { say "FAIL: $*"; FAILS=$((FAILS + 1)); }
t0=$(date +%s.%N)
step() { printf '%s: [%5.1f s] %s\n' "$NAME" "$(awk "BEGIN { print $(date +%s.%N) - $t0 }")" "$*"; }
