// A server started with a low descriptor limit (a shell's `ulimit -n 1024`,
// soft and hard) still starts sessions: they get --max-open-files (4096) only
// where the server may raise its hard limit, else that hard limit, instead of
// failing in setrlimit. The server raises its own soft limit to the hard one
// (a unit at systemd's default soft 1024 would stop accepting at ~1,000
// connections).
// UNSUPPORTED: arm-vm
// RUN: %clang-offload %S/Inputs/on_server.c -o %t
// RUN: sh -c 'ulimit -n 1024 && ulimit -Sn 512 && exec "$@"' sh \
// RUN:   %python %S/Inputs/with_server.py %server -- \
// RUN:   sh -c 'grep "open files" /proc/{pid}/limits; \
// RUN:     OMP_TARGET_OFFLOAD=mandatory "$@"' sh %ompdpu run --devices {addr} -- %t 2>&1 | FileCheck %s
// CHECK: Max open files 1024 1024 files
// CHECK: on-server: 1
