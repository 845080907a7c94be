#!/bin/bash
# ctest cluster-slurm: the testbed with Slurm (`ompdpu testbed up --slurm`): slurmctld on
# n1, a slurmd on every host and DPU, partitions hosts, dpus and all (see SLURM.md).
# Checks, all through srun/sbatch from n1: partitions and status; (a) `srun -p hosts -N2
# ompdpu info`: each host finds its own DPU by its hostname; (b) two tasks on one host
# share its DPU by SLURM_LOCALID; (c) a second ompdpu-server on every DPU started by srun
# (then by Open MPI's mpirun), checked from n1 with `ompdpu info --cluster`, gone after
# scancel (kill), and a heterogeneous job (servers on its DPUs, clients on its hosts); (d) an MPI_Allreduce under srun --mpi=pmix on n1,n2; sbatch; a SIGKILL'd
# `up --slurm` then down; down leaves no Slurm daemon, munged, namespace or file.
# Takes down a testbed that is up before it starts. Exit 77: no namespaces or no Slurm.
# usage: slurm_test.sh [--build DIR]
set -u
NAME=slurm_test
. "$(dirname "$0")/common.sh"
PORT2=18600            # the second servers (the testbed's own listen on 18515)
for t in slurmctld slurmd srun sbatch sinfo munged; do
  command -v $t >/dev/null || skip "no $t (apt-get install slurm-wlm slurm-client munge)"
done
tb() { timeout "${T:-30}" "$TB" "$@"; }
servers2() { pgrep -f "ompdpu-server --listen 0.0.0.0:$PORT2"; }
# Slurm's files outside the testbed's directory (the package's own, left as they were).
slurm_files() { find /var/lib/slurm /var/log/slurm /var/spool /run -maxdepth 2 -iname '*slurm*' 2>/dev/null | grep -v "^$RUN" | sort; }
check_clean() {
  local what=$1 left="" p
  ip netns list | grep -q '^ompdpu-tb-' && left="$left namespaces"
  for p in /proc/[0-9]*; do
    { tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null | grep -q -e 'ompdpu-testbed-holder' \
      -e "$RUN" -e "^slurmstepd" -e "0.0.0.0:$PORT2" && left="$left process(${p#/proc/}: $(tr '\0' ' ' <"$p/cmdline" 2>/dev/null | cut -c1-60))"
  done
  [ -e "$RUN" ] && left="$left $RUN"
  [ "$(slurm_files)" = "$(cat "$WORK/slurm-files.before")" ] || left="$left files($(slurm_files | comm -13 "$WORK/slurm-files.before" - | tr '\n' ,))"
  if [ -n "$left" ]; then fail "$what left:$left"; else step "$what: nothing left"; fi
}

T=60 tb down >/dev/null 2>&1
slurm_files >"$WORK/slurm-files.before"

step "up --nodes 2 --slurm"
T=120 tb up --nodes 2 --slurm >"$WORK/up.log" 2>&1
rc=$?
cat "$WORK/up.log"
[ $rc = 77 ] && skip "$(tail -1 "$WORK/up.log")"
[ $rc = 0 ] || { fail "up --slurm (status $rc)"; exit 1; }

step "status (sinfo), partitions"
tb status >"$WORK/status.log" 2>&1
rc=$?
sed -n '/Slurm/,$p' "$WORK/status.log"
[ $rc = 0 ] && grep -q 'every node up' "$WORK/status.log" || fail "status with Slurm not healthy"
parts=$(tb exec n1 -- sinfo -h -o '%R %N' | sort | tr '\n' ';')
[ "$parts" = "all n[1-2],n1-dpu,n2-dpu;dpus n1-dpu,n2-dpu;hosts n[1-2];" ] ||
  fail "partitions: $parts"
[ "$(tb exec n2-dpu -- printenv SLURM_CONF)" = "$RUN/slurm/slurm.conf" ] || fail "exec: no SLURM_CONF"
grep -q "SLURM_CONF=$RUN/slurm/slurm.conf" "$RUN/mpirun-agent" || fail "mpirun agent: no SLURM_CONF"
out=$(tb srun -p dpus -N2 hostname 2>&1 | sort | tr '\n' ' ')
[ "$out" = "n1-dpu n2-dpu " ] || fail "srun -p dpus -N2 hostname: $out"
out=$(tb srun -N4 hostname 2>&1 | sort | tr '\n' ' ')
[ "$out" = "n1 n1-dpu n2 n2-dpu " ] || fail "srun -N4 hostname (partition all): $out"
out=$(tb srun -p dpus -N2 -l printenv OMPDPU_MUNGE_SOCKET 2>&1 | sort | tr '\n' ' ')
[ "$out" = "0: $RUN/nodes/n1-dpu/munge.socket 1: $RUN/nodes/n2-dpu/munge.socket " ] ||
  fail "tasks do not get their own node's OMPDPU_MUNGE_SOCKET: $out"

step "(a) srun -p hosts -N2 ompdpu info: each host its own DPU"
tb srun -p hosts -N2 -l sh -c 'echo "node $(hostname)"; ompdpu info' >"$WORK/a.log" 2>&1 ||
  fail "srun ompdpu info (status $?)"
for k in 0 1; do
  node=$(sed -n "s/^$k: node //p" "$WORK/a.log")
  dev=$(grep "^$k: *device 0 " "$WORK/a.log")
  echo "    task $k on $node: $(echo "${dev#*: }" | tr -s ' ')"
  [ -n "$node" ] && echo "$dev" | grep -q " ready .* host $node-dpu " ||
    fail "(a) task $k on '$node' did not use $node-dpu: $dev"
done
[ "$(sed -n 's/^[01]: node //p' "$WORK/a.log" | sort | tr '\n' ' ')" = "n1 n2 " ] ||
  fail "(a) not one task on each of n1, n2"

step "(b) srun -p hosts -N1 -n2 ompdpu info: local ranks share the node's DPU"
out=$(tb srun -p hosts -w n1 -N1 -n2 ompdpu info 2>&1 | grep '^this process:' | sort)
echo "$out" | sed 's/^/    /'
for r in 0 1; do
  echo "$out" | grep -q "^this process: local rank $r of 2 (SLURM_LOCALID)" ||
    fail "(b) no 'local rank $r of 2 (SLURM_LOCALID)'"
done

printf '# second servers, started through Slurm or Open MPI\nn1 = 10.77.0.101:%d\nn2 = 10.77.0.102:%d\n' \
  $PORT2 $PORT2 >"$WORK/devices2"
# ompdpu info --cluster from n1 against the second servers, until all answer (<= 10 s).
cluster_ready() {
  local i out
  for i in $(seq 40); do
    out=$(tb exec n1 -- env OMPDPU_CONFIG="$WORK/devices2" OMPDPU_CONNECT_TIMEOUT=2 ompdpu info --cluster 2>&1)
    echo "$out" | grep -q '^2 of 2 DPUs ready$' && break
    sleep 0.25
  done
  echo "$out" | sed 's/^/    /'
  echo "$out" | grep -q '^2 of 2 DPUs ready$' && echo "$out" | grep -q ' ready .* host n1-dpu ' &&
    echo "$out" | grep -q ' ready .* host n2-dpu '
}
servers_gone() {
  local i
  for i in $(seq 50); do servers2 >/dev/null || return 0; sleep 0.2; done
  return 1
}

step "(c) srun -p dpus -N2: a second ompdpu-server on every DPU; ompdpu info --cluster"
# No --munge-socket: the task's OMPDPU_MUNGE_SOCKET (its node's, from the TaskProlog) is
# the server's default, as /run/munge/munge.socket.2 is on a site's DPU.
(cd "$WORK" && exec "$TB" srun -J ompdpu-servers -p dpus -N2 --ntasks-per-node=1 \
  ompdpu-server --listen 0.0.0.0:$PORT2 --munge --root-sessions --verbose --shared-cores \
  </dev/null >"$WORK/srun-servers.log" 2>&1) &
srun_pid=$!
cluster_ready || fail "(c) servers started by srun: not 2 of 2 ready"
grep -q "MUNGE ($RUN/nodes/n2-dpu/munge.socket)" "$WORK/srun-servers.log" ||
  fail "(c) the server on n2-dpu does not use n2-dpu's munged"
tb exec n1 -- squeue -h -s -o '%i %j %N' | sed 's/^/    step /'
tb exec n1 -- scancel -n ompdpu-servers || fail "(c) scancel"
for _ in $(seq 50); do kill -0 $srun_pid 2>/dev/null || break; sleep 0.2; done
kill -0 $srun_pid 2>/dev/null && { fail "(c) srun still running after scancel"; kill $srun_pid; }
wait $srun_pid 2>/dev/null
servers_gone || fail "(c) servers still running after scancel: $(servers2 | tr '\n' ' ')"
step "(c) scancel: srun ended, servers gone"

step "(c) the same with Open MPI: mpirun -H n1-dpu,n2-dpu -np 2 ompdpu-server"
if command -v mpirun >/dev/null; then
  (cd "$WORK" && exec "$TB" mpirun --bind-to none -H n1-dpu,n2-dpu -np 2 \
    ompdpu-server --listen 0.0.0.0:$PORT2 --munge --root-sessions --verbose --shared-cores \
    </dev/null >"$WORK/mpirun-servers.log" 2>&1) &
  mpirun_pid=$!
  cluster_ready || { fail "(c) servers started by mpirun: not 2 of 2 ready"; cat "$WORK/mpirun-servers.log"; }
  kill -TERM $mpirun_pid
  wait $mpirun_pid 2>/dev/null
  servers_gone || fail "(c) servers still running after mpirun was killed: $(servers2 | tr '\n' ' ')"
  step "(c) mpirun killed: servers gone"
else
  say "no mpirun: the Open MPI form skipped"
fi

step "(c) one heterogeneous job: servers on its DPUs (group 0), ompdpu info on its hosts (1)"
out=$(T=40 tb salloc -p dpus -N2 : -p hosts -N2 sh -c "
  srun --het-group=0 --ntasks-per-node=1 ompdpu-server --listen 0.0.0.0:$PORT2 --munge \
    --root-sessions --shared-cores </dev/null >'$WORK/het-servers.log' 2>&1 & s=\$!
  for i in \$(seq 40); do
    srun --het-group=1 -l env OMPDPU_CONFIG='$WORK/devices2' ompdpu info >'$WORK/het.out' 2>&1 &&
      [ \$(grep -c ' ready ' '$WORK/het.out') = 2 ] && break
    sleep 0.25
  done
  grep 'device 0' '$WORK/het.out'; kill \$s; wait" 2>&1)
echo "$out" | grep 'device 0' | tr -s ' ' | sed 's/^/    /'
for k in 1 2; do
  echo "$out" | grep -q " ready .* host n$k-dpu " || fail "(c) het job: n$k did not use n$k-dpu's second server"
done
servers_gone || fail "(c) servers still running after the het job: $(servers2 | tr '\n' ' ')"

if command -v mpicc >/dev/null; then
  step "(d) srun -p hosts -N2 -n2 --mpi=pmix allreduce"
  mpicc -o "$WORK/allreduce" "$HERE/allreduce.c" || fail "mpicc"
  out=$(cd "$WORK" && T=60 tb srun -p hosts -N2 -n2 --mpi=pmix ./allreduce 2>&1)
  rc=$?
  echo "$out" | sed 's/^/    /'
  [ $rc = 0 ] && echo "$out" | grep -q '^rank 0 of 2 on n1: sum 3$' &&
    echo "$out" | grep -q '^rank 1 of 2 on n2: sum 3$' || fail "(d) MPI_Allreduce under srun (status $rc)"
else
  say "no mpicc: (d) skipped"
fi

step "sbatch --wait -p dpus -N2 --wrap 'srun hostname'"
tb sbatch --wait -p dpus -N2 -o "$WORK/batch.out" --wrap 'srun hostname' >/dev/null ||
  fail "sbatch (status $?)"
[ "$(sort "$WORK/batch.out" 2>/dev/null | tr '\n' ' ')" = "n1-dpu n2-dpu " ] ||
  fail "sbatch output: $(cat "$WORK/batch.out" 2>/dev/null)"

step "down"
T=60 tb down || fail "down"
check_clean "down"

step "SIGKILL during up --slurm (once Slurm starts), then down"
"$TB" up --nodes 2 --slurm >/dev/null 2>&1 &
pid=$!
for _ in $(seq 400); do [ -e "$RUN/slurm/run/slurmctld.pid" ] && break; sleep 0.025; done
[ -e "$RUN/slurm/run/slurmctld.pid" ] || say "note: up ended before slurmctld wrote its pid file"
kill -KILL $pid 2>/dev/null
wait $pid 2>/dev/null
say "up killed; Slurm processes left running: $(pgrep -c -f "^(slurmctld|slurmd|munged) .*$RUN/slurm")"
T=60 tb down >/dev/null || fail "down after SIGKILL'd up --slurm"
check_clean "SIGKILL'd up --slurm + down"

step "done: $FAILS failure(s)"
[ $FAILS = 0 ]
