// Root's program against a keyed server that root started without the
// account root's sessions run as (--root-user, here one that does not
// exist): the error says what to do, naming --root-sessions (root's own
// server) and the account to create (a shared one); nothing runs.
// REQUIRES: root
// RUN: %clang-offload %S/Inputs/on_server.c -o %t
// (LLVM 19's libomptarget then runs the region on the host: not on the server.)
// RUN: %python %S/Inputs/with_server.py --server-arg --root-user \
// RUN:   --server-arg ompdpu-no-such-account %server -- \
// RUN:   env OMP_TARGET_OFFLOAD=mandatory %ompdpu run --devices {addr} -- %t \
// RUN:   > %t.out 2>&1 || true
// RUN: FileCheck %s < %t.out
// CHECK: ompdpu error: device 0 ({{[0-9.]+}}:{{[0-9]+}}): clients authenticated as root run as account 'ompdpu-no-such-account', which does not exist here: on a server root started for its own programs, restart it with --root-sessions (root's sessions then run as root); on a shared one, create the account (adduser --system ompdpu-no-such-account) or name another with --root-user
// CHECK-NOT: on-server: 1
