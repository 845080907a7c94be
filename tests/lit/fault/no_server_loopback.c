// no_server.c on loopback: the device list from OMPDPU_DEVICES gives the
// same note; a server runs, but the user's UCX_TLS leaves no transport to it:
// the error says so; UCX's own log (here "transport 'rc' is not available"
// where there is no RDMA) goes to stderr under `ompdpu run`, not into the
// program's output.
// UNSUPPORTED: arm-vm
// RUN: %clang-offload %S/no_server.c -o %t
// RUN: env OMPDPU_DEVICES=127.0.0.1:1 %ompdpu run -- %t 2>&1 | FileCheck %s --check-prefix=NOTE
// RUN: not env UCX_TLS=self OMP_TARGET_OFFLOAD=mandatory %ompdpu run --emulate 1 -- %t 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TLS
// RUN: env UCX_TLS=rc,self %ompdpu run --emulate 1 -- %t 2>/dev/null \
// RUN:   | FileCheck %s --check-prefix=STDOUT --implicit-check-not=UCX

// NOTE: ompdpu note: device 0 (127.0.0.1:1): cannot connect: {{.+}} (nothing accepts connections at that address: is ompdpu-server running and listening there?)
// NOTE: on-server: 0
// NOTE-NEXT: sum: 499500

// TLS: ompdpu error: device 0 ({{.+}}): cannot connect: {{.+}} (UCX_TLS=self is set: it may leave no UCX transport that reaches this server)
// TLS-NOT: sum:

// STDOUT: on-server: 0
// STDOUT-NEXT: sum: 499500
