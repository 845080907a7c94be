#!/bin/sh
# Runs one host process of an MPI job against its own DPU: host rank r uses
# server rank r of an `ompdpu-server --mpi` job, the r-th address of
# SUITE_DPU_LIST (host:port,...).
#   SUITE_DPU_LIST=dpu0:18600,dpu1:18601 mpirun -np 2 rank_device.sh ./program args...
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}
OMPDPU_DEVICES=$(printf '%s\n' "$SUITE_DPU_LIST" | cut -d, -f$((rank + 1)))
if [ -z "$OMPDPU_DEVICES" ]; then
  echo "rank_device.sh: no DPU for rank $rank in SUITE_DPU_LIST='$SUITE_DPU_LIST'" >&2
  exit 2
fi
export OMPDPU_DEVICES
exec "$@"
