// The DPU's kernel crashes (echo c > /proc/sysrq-trigger in a VM of this test's own) during
// a long target region: the guest stops answering without closing anything, so the plugin's
// heartbeat finds the silent server: `server not responding` after OMPDPU_TIMEOUT (3 s
// here), a non-zero exit, the region never completes.
// RUN: %clang-offload %lit-src/fault/server_killed.c -o %t
// RUN: not %vm-fault --private-vm panic --when 'warm-up on-server: 1' --delay 0.5 \
// RUN:   --action panic --limit 60 -- env OMPDPU_TIMEOUT=3 %t 2>&1 | FileCheck %s

// CHECK: fault_run: private VM {{.*}}-panic up
// CHECK: warm-up on-server: 1
// CHECK: action: crashing the guest kernel (sysrq c)
// CHECK: ompdpu error: device 0 (10.{{[0-9.]+}}:18515): server not responding for {{[0-9.]+}} s (OMPDPU_TIMEOUT)
// CHECK-NOT: long region finished
// CHECK: limit: within 60 s
// CHECK: guest console: Kernel panic - not syncing: sysrq triggered crash
// CHECK: exit-status: {{[1-9][0-9]*}}
