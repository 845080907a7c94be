// tests/lit/fault/no_server.c against an address of the guest's subnet with no
// machine behind it: the connection attempt times out (OMPDPU_CONNECT_TIMEOUT),
// and with mandatory offload that is an error and a non-zero exit.
// RUN: %clang-offload %lit-src/fault/no_server.c -o %t
// RUN: not %vm run -- env OMP_TARGET_OFFLOAD=mandatory OMPDPU_CONNECT_TIMEOUT=2 \
// RUN:   OMPDPU_DEVICES=%no-host:18515 %t 2>&1 | FileCheck %s --check-prefix=NOHOST

// NOHOST: ompdpu error: device 0 (10.{{[0-9.]+}}.3:18515): cannot connect: {{.+}}
// NOHOST-NOT: sum:
