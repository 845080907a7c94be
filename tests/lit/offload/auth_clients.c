// Every client authenticates before anything of its runs: a server with no
// way to authenticate refuses to start; a client without the key, with a
// wrong key, or after raw garbage on the port gets a clear error on its side
// and a log line on the server's, and the server keeps serving the client
// that holds the key.
// The refused runs' exit status is not checked: libomptarget 19, built
// with its host plugin beside ompdpu's, runs the region there when no DPU
// answers; the messages and the absence of a region on a server are.
// On the arm64 VM every test authenticates with the guest image's key; this
// one starts servers of its own on host loopback.
// UNSUPPORTED: arm-vm
// RUN: %clang-offload %S/Inputs/on_server.c -o %t
// RUN: not %server --listen 127.0.0.1:0 2>&1 | FileCheck %s --check-prefix=NOWAY
// NOWAY: ompdpu-server error: no way to authenticate clients: give --key FILE
//
// RUN: %python %S/Inputs/with_server.py %server -- env OMPDPU_AUTH=none \
// RUN:   OMP_TARGET_OFFLOAD=mandatory %ompdpu run --devices {addr} -- %t > %t.none 2>&1 || true
// RUN: FileCheck %s --check-prefix=NONE < %t.none
// NONE-DAG: refused client '{{.*}}': this server requires authentication
// NONE-DAG: ompdpu error: device 0 (127.0.0.1:{{[0-9]+}}): this server requires authentication
// NONE-NOT: on-server: 1
//
// RUN: rm -f %t.wrong && %ompdpu key create %t.wrong
// RUN: %python %S/Inputs/with_server.py %server -- env OMPDPU_KEY=%t.wrong \
// RUN:   OMP_TARGET_OFFLOAD=mandatory %ompdpu run --devices {addr} -- %t > %t.wrongout 2>&1 || true
// RUN: FileCheck %s --check-prefix=WRONG < %t.wrongout
// WRONG-DAG: refused client '{{.*}}': wrong key for user
// WRONG-DAG: ompdpu error: device 0 (127.0.0.1:{{[0-9]+}}): cannot connect: the server does not hold key {{.*}}.wrong
// WRONG-NOT: on-server: 1
//
// A key others may read is refused before anything is sent.
// RUN: chmod 644 %t.wrong
// RUN: %python %S/Inputs/with_server.py %server -- env OMPDPU_KEY=%t.wrong \
// RUN:   OMP_TARGET_OFFLOAD=mandatory %ompdpu run --devices {addr} -- %t > %t.mode 2>&1 || true
// RUN: FileCheck %s --check-prefix=MODE < %t.mode
// MODE: ompdpu error: device 0 (127.0.0.1:{{[0-9]+}}): cannot connect: key file {{.*}}.wrong is mode 0644: it must be a regular file only its owner can read (chmod 600
//
// Garbage on the port first, then the real client.
// RUN: %python %S/Inputs/with_server.py %server -- sh -c \
// RUN:   '%python %S/Inputs/send_garbage.py {port} && OMP_TARGET_OFFLOAD=mandatory %ompdpu run --devices {addr} -- %t' \
// RUN:   2>&1 | FileCheck %s
// CHECK: sent garbage
// CHECK: on-server: 1
int main(void) { return 0; }
