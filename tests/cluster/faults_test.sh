#!/bin/bash
# Faults of a cluster job on the testbed (2 nodes), offload way:
#   dpu-killed   n2's DPU server killed mid-training: n2's rank goes on with its
#                host doing the augmentation and validation, with a warning
#                naming the device; the job finishes with the host way's weights
#   rank-killed  n2's rank killed mid-training: every rank ends within seconds
#                with an error naming the lost process, and no session is left
#                on either DPU's server
#   dpu-down     n2's DPU server down before the job: the job stops at start
#                with an error naming the node's DPU (with and without
#                OMP_TARGET_OFFLOAD=mandatory: the offload way needs it)
#   node-absent  a host the testbed does not have: mpirun stops at once, naming it
#   foreign-map  a devices file that gives n2 the DPU of n1: run_cluster's check
#                of the servers' logs catches it (the check can fail)
# Exit 77 when namespaces cannot be made here.
set -u
build=${1:?usage: faults_test.sh BUILD WORKDIR}
work=${2:?usage: faults_test.sh BUILD WORKDIR}
here=$(cd "$(dirname "$0")/../.." && pwd)
tb="$build/bin/ompdpu testbed"
train=$build/bin/ompdpu-train
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1

fail() {
  echo "faults_test: FAIL: $*"
  for f in *.out; do [ -f "$f" ] && { echo "--- $f"; tail -20 "$f"; }; done
  $tb down >/dev/null 2>&1
  exit 1
}
state() { /usr/bin/python3 -c "import json,sys; st=json.load(open('/run/ompdpu-testbed/state.json'))
$1"; }
server_pid() { state "print([n['server'] for n in st['nodes'] if n['name']=='$1'][0])"; }
final_hash() { sed -n 's/^final: .*weight hash \([0-9a-f]*\).*/\1/p' "$1"; }
# Bounded waits: until the file has a line matching, at most N tenths of a second.
wait_for() { local n=0; while ! grep -q "$2" "$1" 2>/dev/null && [ $n -lt "$3" ]; do sleep 0.1; n=$((n + 1)); done; }

$tb up --nodes 2 --force >up.out 2>&1
rc=$?
[ $rc -eq 77 ] && { cat up.out; exit 77; }
[ $rc -eq 0 ] || fail "testbed up: exit status $rc"
trap '$tb down >/dev/null 2>&1' EXIT

args="--epochs 2 --train-limit 1920 --test-limit 600 --val-chunk 100 --quiet"
env="-x OMP_NUM_THREADS=1"

# -- dpu-killed ------------------------------------------------------------
$tb mpirun $env -H n1,n2 -np 2 "$train" --way host $args >host.out 2>&1 || fail "host way: exit status $?"
pid=$(server_pid n2-dpu)
$tb mpirun $env -H n1,n2 -np 2 "$build/bin/ompdpu" run -- "$train" --way offload $args \
  >killed.out 2>&1 &
job=$!
wait_for killed.out "^epoch  1" 600
kill -9 "$pid"
wait $job
rc=$?
[ $rc -eq 0 ] || fail "dpu-killed: the job did not finish (exit status $rc)"
grep -q "warning: rank 1: DPU lost (OpenMP device 0, 10\.77\.0\.102:18515)" killed.out ||
  fail "dpu-killed: no warning naming n2's DPU"
[ "$(final_hash host.out)" = "$(final_hash killed.out)" ] ||
  fail "dpu-killed: weights $(final_hash killed.out) != the host way's $(final_hash host.out)"
echo "dpu-killed: the job finished with the host way's weights ($(final_hash host.out))"

# -- rank-killed -----------------------------------------------------------
$tb up --nodes 2 --force >up2.out 2>&1 || fail "testbed up again: exit status $?"
$tb mpirun $env -H n1,n2 -np 2 "$build/bin/ompdpu" run -- "$train" --way offload $args \
  >rank.out 2>&1 &
job=$!
wait_for rank.out "regions run in process" 600
victim=""
for p in $(ip netns pids ompdpu-tb-n2 2>/dev/null); do
  [ "$(cat /proc/$p/comm 2>/dev/null)" = ompdpu-train ] && victim=$p
done
[ -n "$victim" ] || fail "rank-killed: no ompdpu-train process on n2"
killed_at=$(date +%s.%N)
kill -9 "$victim"
# Every rank ends within seconds: mpirun's own watch, bounded here at 20 s.
n=0
while kill -0 $job 2>/dev/null && [ $n -lt 200 ]; do sleep 0.1; n=$((n + 1)); done
kill -0 $job 2>/dev/null && { kill -9 $job; fail "rank-killed: the job still runs 20 s after the kill"; }
wait $job
rc=$?
took=$(awk "BEGIN { print $(date +%s.%N) - $killed_at }")
[ $rc -ne 0 ] || fail "rank-killed: the job exited 0"
grep -qi "exited on signal 9\|killed\|terminated" rank.out || fail "rank-killed: no message naming the lost process"
for ns in ompdpu-tb-n1 ompdpu-tb-n2; do
  for p in $(ip netns pids $ns 2>/dev/null); do
    [ "$(cat /proc/$p/comm 2>/dev/null)" = ompdpu-train ] && fail "rank-killed: a rank still runs on ${ns#ompdpu-tb-}"
  done
done
# No session left on either server (sessions are the servers' child processes).
for dpu in n1-dpu n2-dpu; do
  spid=$(server_pid $dpu)
  n=0
  while [ -n "$(pgrep -P "$spid")" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
  [ -z "$(pgrep -P "$spid")" ] || fail "rank-killed: $dpu still has sessions: $(pgrep -a -P "$spid")"
done
echo "rank-killed: every rank ended $(printf %.1f "$took") s after the kill; no session left"

# -- dpu-down --------------------------------------------------------------
kill -9 "$(server_pid n2-dpu)"
small="--epochs 1 --train-limit 320 --test-limit 100 --val-chunk 100 --quiet"
timeout 60 $tb mpirun $env -x OMP_TARGET_OFFLOAD=mandatory -x OMPDPU_CONNECT_TIMEOUT=2 -H n1,n2 -np 2 \
  "$build/bin/ompdpu" run -- "$train" --way offload $small >down.out 2>&1
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "dpu-down (mandatory): exit status $rc"
grep -q "10\.77\.0\.102:18515" down.out || fail "dpu-down (mandatory): no error naming n2's DPU"
# Without mandatory too: the offload way needs its DPU, and says so at start.
timeout 60 $tb mpirun $env -x OMPDPU_CONNECT_TIMEOUT=2 -H n1,n2 -np 2 \
  "$build/bin/ompdpu" run -- "$train" --way offload $small >down2.out 2>&1
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "dpu-down: exit status $rc"
grep -q "device 0 (10\.77\.0\.102:18515): cannot connect" down2.out || fail "dpu-down: no note naming n2's DPU"
grep -q "no DPU answered on this node" down2.out || fail "dpu-down: the trainer did not say why it stops"
echo "dpu-down: named at start; the job stopped with the trainer's error"

# -- node-absent -----------------------------------------------------------
timeout 30 $tb mpirun -H n1,n3 -np 2 hostname >absent.out 2>&1
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "node-absent: exit status $rc"
grep -q "n3" absent.out || fail "node-absent: no message naming n3"
echo "node-absent: mpirun stopped naming n3"

# -- foreign-map: the clients check of run_cluster.py fails on a wrong map --
$tb up --nodes 2 --force >up3.out 2>&1 || fail "testbed up again: exit status $?"
sed -i 's/^\(n2 = \).*/\110.77.0.101:18515/' /run/ompdpu-testbed/devices
/usr/bin/python3 "$here/benchmarks/cluster/run_cluster.py" --build "$build" --nodes 2 --scaling weak \
  --workloads training --quick --keep-testbed --out "$work/foreign" >foreign.out 2>&1 && fail "foreign-map: the check passed"
grep -q "n1-dpu served other nodes: \['n2'\]" foreign.out || fail "foreign-map: not named"
echo "foreign-map: caught (n1-dpu served n2)"
echo "faults_test: all passed"
