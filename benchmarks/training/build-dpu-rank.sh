#!/bin/sh
# build-dpu-rank.sh OUTDIR: builds ompdpu-train natively on a real DPU
# (aarch64) from a copy of the repository, for the MPI way's DPU rank:
#   mpirun -np 1 -H host ompdpu-train --way mpi ARGS : \
#          -np 1 -H host-dpu OUTDIR/ompdpu-train --way mpi --role dpu ARGS
# clang-14 through mpicc, -O3, OpenMP without offload (target regions, never
# used by the DPU rank, compile as host code; libomptarget for omp_target_*),
# zlib; no libompdpu.
#   CC=clang-14 benchmarks/training/build-dpu-rank.sh ~/train-bin
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:?usage: build-dpu-rank.sh OUTDIR}
mkdir -p "$out"
export OMPI_CC="${CC:-clang-14}"
echo "build-dpu-rank: $out/ompdpu-train"
mpicc -O3 -fopenmp -I"$root/dnn-kernels/include" -I"$root/training/include" \
  -I"$root/runtime/include" "$root"/dnn-kernels/src/*.c "$root"/training/src/*.c \
  "$root"/training/trainer/*.c "$here/no_ompdpu.c" -lomptarget -lz -lm -o "$out/ompdpu-train"
