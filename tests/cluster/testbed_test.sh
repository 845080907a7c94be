#!/bin/bash
# ctest cluster-testbed: the multi-node testbed (scripts/ompdpu-testbed) end to end.
# up --nodes 2, status, each node's hostname and boot id, exit status of exec, Open MPI
# across n1,n2 and across the hosts and DPUs (hostname, an MPI_Allreduce program), an
# ompdpu handshake from a host to another node's DPU, --auth key; a SIGTERM'd `up` and a
# SIGKILL'd `up` (then down) leave nothing; down leaves nothing (namespaces, links of
# this machine, processes, /run/ompdpu-testbed, /etc/netns).
# Takes down a testbed that is up before it starts. Exit 77: no namespaces here.
# usage: testbed_test.sh [--build DIR]
set -u
NAME=testbed_test
. "$(dirname "$0")/common.sh"

# What must be gone after down: the namespaces, links and processes of the testbed.
links() { ip -o link | awk -F': ' '{print $2}' | sed 's/@.*//' | sort; }
check_clean() {
  local what=$1 left=""
  ip netns list | grep -q '^ompdpu-tb-' && left="$left namespaces($(ip netns list | grep -o '^ompdpu-tb-[^ ]*' | tr '\n' ,))"
  [ "$(links)" = "$(cat "$WORK/links.before")" ] || left="$left links($(links | comm -13 "$WORK/links.before" - | tr '\n' ,))"
  local p
  for p in /proc/[0-9]*; do
    { tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null | grep -q -e 'ompdpu-testbed-holder' \
      -e "^munged .*$RUN" -e "ompdpu-server .*$RUN" && left="$left process(${p#/proc/})"
  done
  [ -e "$RUN" ] && left="$left $RUN"
  ls -d /etc/netns/ompdpu-tb-* >/dev/null 2>&1 && left="$left /etc/netns/ompdpu-tb-*"
  if [ -n "$left" ]; then fail "$what left:$left"; else step "$what: nothing left"; fi
}

timeout 60 "$TB" down >/dev/null 2>&1
links >"$WORK/links.before"

step "up --nodes 2"
timeout 120 "$TB" up --nodes 2 >"$WORK/up.log" 2>&1
rc=$?
cat "$WORK/up.log"
[ $rc = 77 ] && skip "$(tail -1 "$WORK/up.log")"
[ $rc = 0 ] || { fail "up (status $rc)"; exit 1; }

step "status"
timeout 60 "$TB" status >"$WORK/status.log" 2>&1 || { cat "$WORK/status.log"; fail "status"; }
grep -q 'healthy$' "$WORK/status.log" && ! grep -q 'NOT healthy' "$WORK/status.log" ||
  fail "status not healthy"

step "exec: hostname, boot id, exit status"
ids=""
for n in n1 n1-dpu n2 n2-dpu; do
  h=$(timeout 20 "$TB" exec "$n" -- hostname)
  [ "$h" = "$n" ] || fail "exec $n hostname gave '$h'"
  ids="$ids $(timeout 20 "$TB" exec "$n" -- cat /proc/sys/kernel/random/boot_id)"
done
[ "$(echo $ids | tr ' ' '\n' | sort -u | wc -l)" = 4 ] || fail "boot ids not distinct:$ids"
timeout 20 "$TB" exec n2 -- sh -c 'exit 7'
[ $? = 7 ] || fail "exec did not pass on the command's exit status"
[ "$(timeout 20 "$TB" exec n2-dpu -- printenv OMPDPU_MUNGE_SOCKET)" = "$RUN/nodes/n2-dpu/munge.socket" ] ||
  fail "exec n2-dpu: OMPDPU_MUNGE_SOCKET not that node's"

step "ompdpu info from n1 to n2-dpu (cluster network)"
d2=$(timeout 20 "$TB" exec n2-dpu -- hostname -I | awk '{print $1}')
timeout 30 "$TB" exec n1 -- env OMPDPU_DEVICES="$d2:18515" "$BUILD/bin/ompdpu" info 2>&1 |
  grep -q 'ready.*host n2-dpu' || fail "n1 cannot use n2-dpu's server at $d2:18515"

step "mpirun -H n1,n2 -np 2 hostname"
out=$(cd "$WORK" && timeout 60 "$TB" mpirun -H n1,n2 -np 2 hostname 2>&1)
[ "$(echo "$out" | sort | tr '\n' ' ')" = "n1 n2 " ] || fail "mpirun hostname: $out"

if command -v mpicc >/dev/null; then
  mpicc -o "$WORK/allreduce" "$HERE/allreduce.c" || fail "mpicc"
  for hosts in n1,n2 n1,n2,n1-dpu,n2-dpu; do
    np=$(echo $hosts | tr ',' '\n' | wc -l)
    step "mpirun -H $hosts -np $np allreduce"
    out=$(cd "$WORK" && timeout 90 "$TB" mpirun -H $hosts -np $np ./allreduce 2>&1)
    rc=$?
    echo "$out" | sed 's/^/    /'
    want=$((np * (np + 1) / 2))
    [ $rc = 0 ] && [ "$(echo "$out" | grep -c "sum $want\$")" = $np ] ||
      fail "MPI_Allreduce across $hosts (status $rc)"
    for h in ${hosts//,/ }; do echo "$out" | grep -q " on $h: " || fail "no rank on $h"; done
  done
else
  say "no mpicc: MPI_Allreduce skipped"
fi

step "up while up: an error; up --force"
timeout 60 "$TB" up >/dev/null 2>&1 && fail "a second up did not refuse"
step "down"
timeout 60 "$TB" down || fail "down"
check_clean "down"
timeout 60 "$TB" down >/dev/null || fail "a second down failed"

step "up --auth key"
timeout 120 "$TB" up --auth key --nodes 1 >/dev/null 2>&1 || fail "up --auth key"
timeout 60 "$TB" status >"$WORK/status-key.log" 2>&1 || { cat "$WORK/status-key.log"; fail "status (key)"; }
timeout 60 "$TB" down >/dev/null || fail "down (key)"
check_clean "down (--auth key)"

step "SIGTERM during up"
# Not under timeout(1): the signal must reach up itself (up has its own time limits).
"$TB" up --nodes 2 >"$WORK/up-term.log" 2>&1 &
pid=$!
for _ in $(seq 200); do ip netns list | grep -q '^ompdpu-tb-n1-dpu' && break; sleep 0.05; done
kill -TERM $pid
wait $pid
rc=$?
[ $rc = 143 ] || [ $rc = 0 ] || fail "SIGTERM'd up exited $rc: $(tail -1 "$WORK/up-term.log")"
[ $rc = 0 ] && { say "up finished before SIGTERM: taking it down"; "$TB" down >/dev/null; }
check_clean "SIGTERM'd up"

step "SIGKILL during up, then down"
"$TB" up --nodes 2 >/dev/null 2>&1 &
pid=$!
for _ in $(seq 200); do ip netns list | grep -q '^ompdpu-tb-n2' && break; sleep 0.05; done
kill -KILL $pid
wait $pid 2>/dev/null
timeout 60 "$TB" down >/dev/null || fail "down after SIGKILL'd up"
check_clean "SIGKILL'd up + down"

step "done: $FAILS failure(s)"
[ $FAILS = 0 ]
