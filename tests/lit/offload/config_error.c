// A malformed OMPDPU_DEVICES is reported once (both copies of the plugin,
// x86_64 and aarch64, read it), and the program runs on the host.
// RUN: %clang-offload %S/Inputs/on_server.c -o %t
// RUN: env OMPDPU_DEVICES=garbage %ompdpu run -- %t 2>&1 | FileCheck %s
// RUN: env OMPDPU_DEVICES=127.0.0.1:99999 %ompdpu run -- %t 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PORT
// CHECK: ompdpu error: configuration: OMPDPU_DEVICES: expected host:port, got 'garbage'
// CHECK-NOT: configuration:
// CHECK: on-server: 0
// PORT: ompdpu error: configuration: OMPDPU_DEVICES: {{.*}}99999
// PORT-NOT: configuration:
// PORT: on-server: 0
int main(void) { return 0; }
