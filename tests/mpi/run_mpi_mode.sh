#!/usr/bin/env bash
# ctest driver: start two ompdpu-server ranks as one MPI job, run
# halo_ring.c against them with offloading mandatory, check its output;
# then, through `ompdpu emulate --mpi`, several programs one after another
# against the same ranks (each must get fresh images).
set -euo pipefail
BIN=$1 LIB=$2 INC=$3 SRC=$4 WORK=$5
mkdir -p "$WORK"
MPI_INC=$(pkg-config --cflags-only-I ompi-c 2>/dev/null || echo -I/usr/lib/x86_64-linux-gnu/openmpi/include)
MPI_LIBS=$(pkg-config --libs ompi-c 2>/dev/null || echo -lmpi)
clang-14 -O1 -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu -I"$INC" $MPI_INC \
  "$SRC/halo_ring.c" -o "$WORK/halo_ring" -L"$LIB" -lompdpu_mpi $MPI_LIBS
clang-14 -O1 -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu \
  "$SRC/fresh_globals.c" -o "$WORK/fresh_globals"
# Runs halo_ring against the servers $1 (offloading mandatory, OMPDPU_KEY
# as exported) and checks that both ranks exchanged on the servers.
run_halo() {
  local out
  out=$(OMP_TARGET_OFFLOAD=mandatory timeout 60 "$BIN/ompdpu" run --devices "$1" -- "$WORK/halo_ring")
  echo "$out"
  grep -qx "ranks: 0 1" <<<"$out"
  grep -qx "exchange: correct" <<<"$out"
  grep -qx "on-server: 1" <<<"$out"
}
# Below the ephemeral range, where the sockets of tests running beside this
# one (UCX connections, emulated servers on port 0) cannot hold PORT or PORT+1.
EPHEMERAL_LOW=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
PORT=$((20000 + RANDOM % (EPHEMERAL_LOW - 20002)))
# The servers authenticate their client like any other (a key for this run;
# root's private servers keep root's sessions as root).
rm -f "$WORK/key"
"$BIN/ompdpu" key create "$WORK/key" >/dev/null
export OMPDPU_KEY=$WORK/key
AS_ROOT=()
[[ $(id -u) -ne 0 ]] || AS_ROOT=(--root-sessions)
mpirun --allow-run-as-root --oversubscribe --mca pml ob1 --mca btl self,vader \
  -np 2 "$BIN/ompdpu-server" --mpi --listen 127.0.0.1:$PORT --key "$OMPDPU_KEY" "${AS_ROOT[@]}" \
  >"$WORK/servers.log" 2>&1 &
MPIRUN=$!
trap 'kill $MPIRUN 2>/dev/null || true; wait $MPIRUN 2>/dev/null || true' EXIT
DEVICES=127.0.0.1:$PORT,127.0.0.1:$((PORT + 1))
for _ in $(seq 100); do
  if grep -q "rank 1 of 2 listening" "$WORK/servers.log" && grep -q "rank 0 of 2 listening" "$WORK/servers.log"; then break; fi
  sleep 0.1
done
run_halo "$DEVICES"
kill $MPIRUN 2>/dev/null || true
wait $MPIRUN 2>/dev/null || true
trap - EXIT

# The same job started by `ompdpu emulate --mpi` (the benchmark suite's
# halo offload-mpi way): the ranks must get the run's key.
coproc EMU { exec "$BIN/ompdpu" emulate 2 --mpi -- mpirun --allow-run-as-root \
  --oversubscribe --mca pml ob1 --mca btl self,vader 2>"$WORK/emulate.log"; }
EMU_JOB=$EMU_PID
trap 'kill $EMU_JOB 2>/dev/null || true' EXIT
if ! read -r -t 90 LINE <&"${EMU[0]}"; then
  cat "$WORK/emulate.log" >&2
  echo "ompdpu emulate --mpi did not announce its DPUs" >&2
  exit 1
fi
DEVICES=$(python3 -c 'import json,sys; print(",".join(json.loads(sys.argv[1])["devices"]))' "$LINE")
KEY=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["key"])' "$LINE")
OMPDPU_KEY=$KEY
run_halo "$DEVICES"
# Other programs after it, and the same one twice: a rank that kept an
# earlier client's image would show its globals or mix the two images.
for _ in 1 2; do
  OMP_TARGET_OFFLOAD=mandatory timeout 60 "$BIN/ompdpu" run --devices "$DEVICES" -- \
    "$WORK/fresh_globals" | tee "$WORK/fresh.out"
  grep -qx "fresh globals: yes" "$WORK/fresh.out"
done
run_halo "$DEVICES"
exec {EMU[1]}>&-
wait $EMU_JOB || true
trap - EXIT
echo "mpi mode: passed"
