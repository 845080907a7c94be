// Servers that stopped answering before the program started cost it one
// connect timeout in all: the handshakes run at once, the second plugin copy
// (`ompdpu run` puts both ISAs' on the path) takes the first one's word, and
// nobody says goodbye to a server that never answered. The same for
// `ompdpu info`. The program then runs on the host, with a note per server.
// UNSUPPORTED: arm-vm
// RUN: %clang-offload %S/../offload/Inputs/on_server.c -o %t
// RUN: %python %S/Inputs/frozen_at_start.py %server -- %ompdpu -- %t | FileCheck %s
// CHECK: ompdpu note: device 0 (A): cannot connect: no answer within 2.0 s (OMPDPU_CONNECT_TIMEOUT)
// CHECK: ompdpu note: device 1 (B): cannot connect: no answer within 2.0 s (OMPDPU_CONNECT_TIMEOUT)
// CHECK: on-server: 0
// CHECK: program: gave up within 1.5 connect timeouts: 1
// CHECK: info: unreachable devices: 2
// CHECK: info: gave up within 1.5 connect timeouts: 1
