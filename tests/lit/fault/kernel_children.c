// Processes a kernel starts end with its session: one that tries to leave
// the session's process group (setsid, setpgid) is refused, and the
// supervisor kills the group when the session ends, so nothing the client
// started lives on on the DPU. The child sleeps 300 s; the check after the
// run finds it gone.
// UNSUPPORTED: arm-vm
// RUN: %clang-offload %s -o %t
// RUN: %run-dpu %t > %t.out 2>&1
// RUN: FileCheck %s < %t.out
// RUN: %python -c "import os, sys, time; \
// RUN:   pid = int(open(sys.argv[1]).read().split('child ')[1].split()[0]); \
// RUN:   [time.sleep(0.1) for _ in range(50) if os.path.exists('/proc/%%d' %% pid)]; \
// RUN:   print('child alive after its session: %%d' %% os.path.exists('/proc/%%d' %% pid))" %t.out \
// RUN:   | FileCheck %s --check-prefix=GONE
// CHECK: on-server: 1, setsid: Operation not permitted, setpgid: Operation not permitted, child {{[0-9]+}} started
// GONE: child alive after its session: 0
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void) {
  int pid = 0, child = 0, sid = 0, pgid = 0;
#pragma omp target map(from : pid, child, sid, pgid)
  {
    pid = getpid();
    int p[2];
    if (pipe(p) == 0) {
      child = fork();
      if (child == 0) {
        int e[2] = {setsid() == -1 ? errno : 0, setpgid(0, 0) == -1 ? errno : 0};
        if (write(p[1], e, sizeof e) < 0)
          _exit(1);
        sleep(300);
        _exit(0);
      }
      int e[2] = {-1, -1};
      if (read(p[0], e, sizeof e) == sizeof e) {
        sid = e[0];
        pgid = e[1];
      }
    }
  }
  printf("on-server: %d, setsid: %s, setpgid: %s, child %d started\n",
         pid != getpid(), strerror(sid), strerror(pgid), child);
  return 0;
}
