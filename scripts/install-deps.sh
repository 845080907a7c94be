#!/usr/bin/env bash
# Install every Debian package ompdpu needs to build, test and benchmark.
# Idempotent: does nothing (quickly) when everything is present.
set -euo pipefail

PACKAGES=(
  # toolchain: Debian's LLVM 14 is the OpenMP offload compiler
  clang-14 lld-14 libomp-14-dev libomp-dev llvm-14-tools cmake ninja-build
  pkg-config python3 python3-psutil
  # scripts/sanitizers.sh: objects shared by every clone (~/.cache/ompdpu/ccache)
  ccache
  # the runtime's libraries
  libucx-dev ucx-utils libffi-dev libelf-dev libseccomp-dev
  # authentication: key files (libsodium) and MUNGE (munged runs in the tests)
  libsodium-dev libmunge-dev munge
  # tests and benchmarks (OpenBLAS, BLIS and oneDNN are the kernels' references)
  libgtest-dev libgmock-dev libbenchmark-dev libopenblas-dev libblis-dev
  libdnnl-dev openmpi-bin libopenmpi-dev
  # the aarch64 portability check of dnn-kernels (serial, under qemu-user)
  qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross
  # llvm-patches/apply-and-test.sh (unpacks and patches libomptarget's source)
  patch xz-utils
  # training (ompdpu-train): the IDX.gz reader's zlib and the real data set
  # (Fashion-MNIST, gzip IDX under /usr/share/datasets/fashion-mnist)
  zlib1g-dev dataset-fashion-mnist
  # tests/llvm-versions: a Debian 13 root file system for LLVM 17's and 18's packages
  mmdebstrap
  # LLVM 19 (libomptarget rebuilt with the dpu plugin: llvm-patches/build-libomptarget-19.sh);
  # they coexist with 14's (libomp 19, which does not, is unpacked privately)
  clang-19 clang-tools-19 llvm-19-dev libzstd-dev
  # the server's readiness for systemd (sd_notify); scripts/package.sh and
  # tests/packaging: Debian packages (CPack + dpkg-shlibdeps), their checks
  libsystemd-dev dpkg-dev fakeroot lintian systemd
  # tests/packaging: the service booted under a real systemd (systemd-nspawn)
  systemd-container
  # `ompdpu testbed up --slurm`, tests/cluster/slurm_test.sh: slurmctld, slurmd, srun
  # (slurm-wlm-basic-plugins has mpi/pmix, for srun --mpi=pmix with Open MPI)
  slurm-wlm slurmctld slurmd slurm-client slurm-wlm-basic-plugins
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  [[ $(id -u) -eq 0 ]] || SUDO=sudo
  # A stale or partly failing package index must not stop the install of
  # packages the index already knows.
  $SUDO apt-get update -qq || echo "install-deps: apt-get update reported errors; continuing"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
