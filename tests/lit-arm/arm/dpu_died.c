// The DPU dies: qemu (a VM of this test's own) is killed with SIGKILL during a long target
// region. Nothing closes the connection (the link stays, nobody answers on it), so the
// plugin's heartbeat finds the silent server: `server not responding` after OMPDPU_TIMEOUT
// (3 s here), a non-zero exit, the region never completes.
// RUN: %clang-offload %lit-src/fault/server_killed.c -o %t
// RUN: not %vm-fault --private-vm died --when 'warm-up on-server: 1' --delay 0.5 \
// RUN:   --action kill-qemu --limit 60 -- env OMPDPU_TIMEOUT=3 %t 2>&1 | FileCheck %s

// CHECK: fault_run: private VM {{.*}}-died up
// CHECK: warm-up on-server: 1
// CHECK: action: killing qemu (the DPU dies)
// CHECK: ompdpu error: device 0 (10.{{[0-9.]+}}:18515): server not responding for {{[0-9.]+}} s (OMPDPU_TIMEOUT)
// CHECK-NOT: long region finished
// CHECK: limit: within 60 s
// CHECK-NOT: guest console: Kernel panic
// CHECK: exit-status: {{[1-9][0-9]*}}
