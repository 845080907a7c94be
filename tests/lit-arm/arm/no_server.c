// tests/lit/fault/no_server.c on the Arm testbed: no server on the guest's port 1 (the
// guest kernel refuses the connection), and no machine at all behind a guest-subnet
// address (the connection attempt times out). Offload not mandatory: a note, and the
// program runs on the host with correct results. Mandatory: an error, a non-zero exit.
// RUN: %clang-offload %lit-src/fault/no_server.c -o %t
// RUN: %vm run --ports 1 -- %t 2>&1 | FileCheck %s --check-prefix=NOTE
// RUN: not env OMP_TARGET_OFFLOAD=mandatory %vm run --ports 1 -- %t 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MAND
// RUN: not %vm run -- env OMP_TARGET_OFFLOAD=mandatory OMPDPU_CONNECT_TIMEOUT=2 \
// RUN:   OMPDPU_DEVICES=%no-host:18515 %t 2>&1 | FileCheck %s --check-prefix=NOHOST

// NOTE: ompdpu note: device 0 (10.{{[0-9.]+}}:1): cannot connect: {{.+}}
// NOTE: on-server: 0
// NOTE-NEXT: sum: 499500

// MAND: ompdpu error: device 0 (10.{{[0-9.]+}}:1): cannot connect: {{.+}}
// MAND-NOT: sum:

// NOHOST: ompdpu error: device 0 (10.{{[0-9.]+}}.3:18515): cannot connect: {{.+}}
// NOHOST-NOT: sum:
