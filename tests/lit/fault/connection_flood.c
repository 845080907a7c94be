// Connections that never send their connection request (idle, or a byte a
// second) are closed oldest first beyond --max-startups (512 in all, 64 from
// one address) and after the handshake timeout: while 5,000 idle and 100 slow
// ones are held, a client with the key starts at once and runs on the server,
// the server stays small, and its log says what it closed in one line.
// UNSUPPORTED: arm-vm
// Sanitizer builds: the server's memory is theirs to count (ASan's quarantine
// alone grew 40 MiB here); pending_sockets runs under them in the unit tests.
// UNSUPPORTED: sanitizer
// RUN: %clang-offload %S/../offload/Inputs/on_server.c -o %t
// RUN: %python %S/Inputs/connection_flood.py %server -- %ompdpu -- %t | FileCheck %s
// CHECK: one address: on-server: 1
// CHECK-NEXT: one address: started within 2 s: 1
// CHECK-NEXT: one address: closed by the server: all 5100: 1
// CHECK: 100 addresses: on-server: 1
// CHECK-NEXT: 100 addresses: started within 2 s: 1
// CHECK-NEXT: 100 addresses: closed by the server: all 5100: 1
// CHECK-NEXT: server memory grew by under 32 MiB: 1
// CHECK-NEXT: server alive: 1
// CHECK: log: ompdpu-server warning: closed {{[0-9]+}} connections that sent no connection request: {{[0-9]+}} after 4 s, {{[1-9][0-9]*}} over 64 from one address (127.0.0.2), 0 over 512 in all
// CHECK: log: ompdpu-server warning: closed {{[0-9]+}} connections that sent no connection request: {{.*}}, {{[1-9][0-9]*}} over 512 in all
