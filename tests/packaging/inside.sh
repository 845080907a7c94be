#!/bin/sh
# Run by tests/packaging/run.sh inside the clean Debian 12 root: install the
# host package as a user would (apt, Depends and Recommends from the mirror),
# build the example with find_package(ompdpu) and with ompdpu-cc, and run it on
# an emulated DPU. Writes what run.sh checks to /opt/out.
set -eu
export DEBIAN_FRONTEND=noninteractive
out=/opt/out
mkdir -p $out
apt-get update -qq
apt-get install -y -qq /opt/debs/ompdpu_*_amd64.deb >$out/apt.log 2>&1 ||
  { tail -20 $out/apt.log; exit 1; }
# The DPU package too (its amd64 build: the same maintainer scripts): its
# postinst makes the --root-user account, and a reinstall keeps it.
apt-get install -y -qq /opt/debs/ompdpu-server_*_amd64.deb >$out/apt-server.log 2>&1 ||
  { tail -20 $out/apt-server.log; exit 1; }
getent passwd ompdpu >$out/account
apt-get install -y -qq --reinstall /opt/debs/ompdpu-server_*_amd64.deb >>$out/apt-server.log 2>&1 ||
  { tail -20 $out/apt-server.log; exit 1; }
getent passwd ompdpu >>$out/account
cd /opt/example
if ! { cmake -S . -B build -DCMAKE_C_COMPILER=clang-14 && cmake --build build; } >$out/cmake.log 2>&1; then
  tail -20 $out/cmake.log
  exit 1
fi
ompdpu-cc --emulate -O2 where_it_runs.c -o cc-emulated -lompdpu
mkdir -p aarch64 && (cd aarch64 && ompdpu-cc -O2 -save-temps ../where_it_runs.c -o cc-dpu -lompdpu)
ompdpu-cc --showme -O2 x.c >$out/showme-cc
ompdpu-c++ --emulate --showme -c x.cpp >$out/showme-cxx
for exe in build/where_it_runs cc-emulated; do
  OMP_TARGET_OFFLOAD=mandatory OMPDPU_TRACE=1 ompdpu run --emulate 1 -- \
    sh -c "./$exe && echo \"servers \$OMPDPU_SERVER_PIDS\"" >"$out/${exe##*/}.out" 2>&1 ||
    { cat "$out/${exe##*/}.out"; exit 1; }
done
