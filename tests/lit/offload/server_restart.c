// A server stopped while a client was connected closes first, and its end of
// that connection stays in TIME-WAIT on the listening port for up to a
// minute: a restarted server (systemctl restart) must still listen on the
// port at once. A second server on a port one already listens on is refused.
// UNSUPPORTED: arm-vm
// RUN: %python %S/Inputs/restart_server.py %server | FileCheck %s
// CHECK: time-wait on the port: 1
// CHECK-NEXT: restarted: 127.0.0.1:PORT
// CHECK-NEXT: a second server on the port: exit 1, ompdpu-server error: cannot listen on 127.0.0.1:PORT: Address already in use
