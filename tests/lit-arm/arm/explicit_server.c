// tests/lit/offload/explicit_server.c on the Arm testbed: a server started by hand in the
// guest (`ompdpu-server --listen 0.0.0.0:PORT --cores 0`, this test's own) and reached
// through `ompdpu run --devices ADDR`, as on a real BlueField; the program and its checks
// are the original's. `ompdpu info` lists the configured devices and their state.
// RUN: %clang-offload %lit-src/offload/explicit_server.c -o %t
// RUN: %vm-fault --fresh-server --server-args="--cores 0" -- \
// RUN:   env OMP_TARGET_OFFLOAD=mandatory %ompdpu run --devices {addr} -- %t \
// RUN:   | FileCheck %lit-src/offload/explicit_server.c
// RUN: not %vm-fault --fresh-server -- env OMPDPU_DEVICES={addr},{guest}:1 %ompdpu info \
// RUN:   | FileCheck %s --check-prefix=INFO

// INFO: device 0 10.{{[0-9.]+}}:{{[0-9]+}} {{.*}}ready isa aarch64 {{.*}}host ompdpu-vm
// INFO: device 1 10.{{[0-9.]+}}:1 {{.*}}unreachable: cannot connect
// INFO: exit-status: 1
