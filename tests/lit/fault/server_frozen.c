// A peer gone silent: the server (supervisor and sessions, one of this test's own) is
// frozen with SIGSTOP during a long target region. Its connections stay up (nothing
// closes them; over RDMA the reliable connection's acknowledgements still come from the
// device), so only the plugin's heartbeat can tell: `server not responding` after
// OMPDPU_TIMEOUT (3 s here), a non-zero exit, the region never completes.
// RUN: %clang-offload %S/server_killed.c -o %t
// RUN: not %fault --fresh-server --when 'warm-up on-server: 1' --delay 0.3 \
// RUN:   --action freeze-server --limit 40 -- env OMPDPU_TIMEOUT=3 %t 2>&1 | FileCheck %s
// CHECK: warm-up on-server: 1
// CHECK: action: freezing server
// CHECK: ompdpu error: device 0 ({{[0-9.]+}}:{{[0-9]+}}): server not responding for {{[0-9.]+}} s (OMPDPU_TIMEOUT)
// CHECK-NOT: long region finished
// CHECK: limit: within 40 s
// CHECK: exit-status: {{[1-9][0-9]*}}
