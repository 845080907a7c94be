#!/bin/bash
# Proof that the testbed's nodes are different machines for UCX (tests/cluster/README.md).
#
# ucx_perftest (ucp_am_lat, UCX_LOG_LEVEL=info: UCX prints each endpoint configuration,
# "ep_cfg[N]: am(TRANSPORT/DEVICE ...)") between
#   (1) n1 and n2        two hosts                      -> network (tcp) only
#   (2) n1 and n1-dpu    a host and its DPU             -> network (tcp) only
#   (3) two processes on n1                             -> shared memory (posix/sysv, cma)
# and, to show that shared memory is not merely less preferred but unreachable between
# nodes, (4) n1 and n2 with UCX_TLS=posix,sysv,cma,self: UCX must find no transport.
# Fails if (1) or (2) used posix/sysv/cma/knem/xpmem, (3) no shared memory, or (4)
# connected.
#
# usage: ucx_transports.sh [--build DIR] [--testbed SCRIPT] [--iters N]
# Uses a testbed that is up (and leaves it up); otherwise brings one up (2 nodes) and
# takes it down at the end. Exit 77: namespaces cannot be made here.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BUILD=${OMPDPU_BUILD_DIR:-$REPO/build}
TB=$REPO/scripts/ompdpu-testbed
ITERS=20000
while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD=$2; shift 2 ;;
    --testbed) TB=$2; shift 2 ;;
    --iters) ITERS=$2; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--testbed SCRIPT] [--iters N]" >&2; exit 2 ;;
  esac
done
export OMPDPU_BUILD_DIR=$BUILD

say() { echo "ucx_transports: $*"; }
skip() { say "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "not root: the testbed needs network namespaces"
for t in ip unshare nsenter; do command -v $t >/dev/null || skip "no $t"; done
command -v ucx_perftest >/dev/null || skip "no ucx_perftest (apt-get install ucx-utils)"

WORK=$(mktemp -d /tmp/ucx-transports.XXXXXX)
OWN=0
cleanup() {
  local j
  for j in $(jobs -p); do kill "$j" 2>/dev/null; done   # our own background servers
  [ $OWN = 1 ] && "$TB" down >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

if ! "$TB" status >/dev/null 2>&1; then
  say "bringing up a 2-node testbed"
  timeout 120 "$TB" up --nodes 2 --force >"$WORK/up.log" 2>&1 ||
    { code=$?; cat "$WORK/up.log"; [ $code = 77 ] && exit 77; say "FAIL: testbed up"; exit 1; }
  OWN=1
fi
STATE=/run/ompdpu-testbed/state.json
PY=python3; [ -x /usr/bin/python3 ] && PY=/usr/bin/python3
addr() {  # addr NODE FIELD
  $PY -c 'import json,sys; s=json.load(open(sys.argv[1]))
print(next(n[sys.argv[3]] for n in s["nodes"] if n["name"]==sys.argv[2]))' "$STATE" "$1" "$2"
}

PORT=23411
# run_case LABEL SERVER_NODE CLIENT_NODE ADDRESS [VAR=VALUE...]: prints the transports of
# both sides' endpoint configurations ("" if none) in $WORK/LABEL.tls, latency in .lat
run_case() {
  local label=$1 srv=$2 cli=$3 ip=$4; shift 4
  PORT=$((PORT + 1))
  local so=$WORK/$label.server co=$WORK/$label.client
  "$TB" exec "$srv" -- env UCX_LOG_LEVEL=info UCX_LOG_FILE=stdout "$@" \
      timeout 60 stdbuf -oL ucx_perftest -p $PORT >"$so" 2>&1 &
  local spid=$!
  for _ in $(seq 100); do grep -q "Waiting for connection" "$so" 2>/dev/null && break; sleep 0.1; done
  "$TB" exec "$cli" -- env UCX_LOG_LEVEL=info UCX_LOG_FILE=stdout "$@" \
      timeout 60 ucx_perftest "$ip" -p $PORT -t ucp_am_lat -n "$ITERS" -w 1000 >"$co" 2>&1
  echo $? >"$WORK/$label.rc"
  # A refused client leaves its server waiting: stop it (timeout passes SIGTERM on).
  for _ in $(seq 30); do kill -0 $spid 2>/dev/null || break; sleep 0.1; done
  kill $spid 2>/dev/null; wait $spid 2>/dev/null
  grep -ho 'ep_cfg\[[0-9]*\]: .*' "$so" "$co" | grep -o '[a-z_0-9]*/[A-Za-z_0-9.:-]*' |
    sort -u | tr '\n' ' ' >"$WORK/$label.tls"
  awk '/^Final:/ {print $3 " us (median), " $4 " us (average)"}' "$co" >"$WORK/$label.lat"
}

N1=$(addr n1 ip); N2=$(addr n2 ip); D1=$(addr n1-dpu link_ip)
run_case hosts n2 n1 "$N2"
run_case host-dpu n1-dpu n1 "$D1"
run_case same-node n1 n1 "$N1"
run_case sm-only n2 n1 "$N2" UCX_TLS=posix,sysv,cma,self

fail=0
SM='(^| )(posix|sysv|cma|knem|xpmem)/'
show() { printf '  %-34s %s%s\n' "$1" "$(cat "$WORK/$2.tls")" \
  "$( [ -s "$WORK/$2.lat" ] && echo "  [am latency $(cat "$WORK/$2.lat")]")"; }
say "transports UCX chose (UCX_LOG_LEVEL=info, ep_cfg of client and server):"
show "(1) n1 <-> n2 ($N2):" hosts
show "(2) n1 <-> n1-dpu ($D1):" host-dpu
show "(3) n1 <-> n1 (two processes):" same-node
for c in hosts host-dpu; do
  t=$(cat "$WORK/$c.tls")
  if [ -z "$t" ] || [ "$(cat "$WORK/$c.rc")" != 0 ]; then
    say "FAIL: $c: ucx_perftest did not run (status $(cat "$WORK/$c.rc")):"
    tail -5 "$WORK/$c.client"; fail=1
  elif echo "$t" | grep -Eq "$SM"; then
    say "FAIL: $c: shared memory between different nodes: $t"; fail=1
  elif ! echo "$t" | grep -q 'tcp/'; then
    say "FAIL: $c: no tcp: $t"; fail=1
  fi
done
t=$(cat "$WORK/same-node.tls")
if [ "$(cat "$WORK/same-node.rc")" != 0 ] || ! echo "$t" | grep -Eq '(^| )(posix|sysv)/'; then
  say "FAIL: same-node: no shared memory between two processes on n1: '$t'"
  tail -5 "$WORK/same-node.client"; fail=1
fi
if [ "$(cat "$WORK/sm-only.rc")" = 0 ]; then
  say "FAIL: (4) n1 <-> n2 with UCX_TLS=posix,sysv,cma,self connected: $(cat "$WORK/sm-only.tls")"
  fail=1
else
  why=$(grep -ho 'no [a-z ]*transport[^]]*\|[Dd]estination is unreachable\|unreachable' \
        "$WORK/sm-only.client" | head -1)
  printf '  %-34s %s\n' "(4) n1 <-> n2, shared memory only:" "no connection (${why:-refused})"
fi
[ $fail = 0 ] && say "PASS: nodes are different machines for UCX (tcp only between them; shared memory within one)"
exit $fail
