#!/bin/sh
# build-dpu-ranks.sh OUTDIR: builds the MPI-rank-on-DPU programs of the
# benchmark suite natively, on a real DPU (aarch64), from a copy of the
# repository: suite-{augment,conv,halo}-mpi-dpu and the micro-benchmarks'
# ompdpu-mpi-pingpong in OUTDIR. clang-14 through
# mpicc, -O3, no -mcpu: the same compiler and flags as the device images the
# host builds, so the DPU rank does the offload's arithmetic bit for bit.
#   CC=clang-14 benchmarks/suite/build-dpu-ranks.sh ~/suite-bin
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:?usage: build-dpu-ranks.sh OUTDIR}
mkdir -p "$out"
export OMPI_CC="${CC:-clang-14}"
for w in augment conv halo; do
  echo "build-dpu-ranks: $out/suite-$w-mpi-dpu"
  mpicc -O3 -fopenmp -DSUITE_ROLE_DPU -I"$root/dnn-kernels/include" -I"$here" \
    "$here/${w}_mpi.c" "$root"/dnn-kernels/src/*.c -lm -o "$out/suite-$w-mpi-dpu"
done
# The micro-benchmarks' MPI reference: the ping-pong's rank on the DPU.
echo "build-dpu-ranks: $out/ompdpu-mpi-pingpong"
mpicc -O2 "$root/benchmarks/micro/mpi_pingpong.c" -o "$out/ompdpu-mpi-pingpong"
