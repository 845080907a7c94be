// Started as root, the server runs each session as the user its client
// proved to be: the owner of the key (here the system account daemon), and a
// client authenticated as root as the --root-user account (here nobody),
// never as root; under resource limits (open files, address space, no core
// dumps). Client (root) and session then share a machine but not an account:
// they talk over TCP, not shared memory. The session has the account's
// environment, not the server's (root's).
// REQUIRES: root, server-reachable-by-others
// RUN: %clang-offload %s -o %t
// RUN: env ROOT_SECRET_TOKEN=leaked %python %S/Inputs/with_server.py --key-owner daemon --server-arg --root-user \
// RUN:   --server-arg nobody --server-arg --max-open-files --server-arg 100 %server -- \
// RUN:   env OMP_TARGET_OFFLOAD=mandatory OMPDPU_TRACE=1 %ompdpu run --devices {addr} -- %t \
// RUN:   > %t.daemon 2>&1
// RUN: FileCheck %s --check-prefixes=CHECK,DAEMON -DAS=%address-space-limited < %t.daemon
// RUN: %python %S/Inputs/with_server.py --server-arg --root-user --server-arg nobody \
// RUN:   --server-arg --max-open-files --server-arg 100 %server -- \
// RUN:   env OMP_TARGET_OFFLOAD=mandatory OMPDPU_TRACE=1 %ompdpu run --devices {addr} -- %t \
// RUN:   > %t.nobody 2>&1
// RUN: FileCheck %s --check-prefixes=CHECK,NOBODY -DAS=%address-space-limited < %t.nobody
// CHECK: bulk endpoint:
// CHECK: tcp/
// DAEMON: session uid 1 gid 1 euid 1
// NOBODY: session uid 65534 gid 65534 euid 65534
// CHECK: can become root: 0
// CHECK: open files 100 core 0 address space limited: [[AS]]
// DAEMON: environment: HOME=/usr/sbin USER=daemon PATH=/usr/local/bin:/usr/bin:/bin SECRET=(unset)
// NOBODY: environment: HOME=/nonexistent USER=nobody PATH=/usr/local/bin:/usr/bin:/bin SECRET=(unset)
// CHECK: on-server: 1
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

int main(void) {
  int host_pid = getpid(), dev_pid = -1;
  int uid = -1, gid = -1, euid = -1, root = -1, limited = 0;
  long files = -1, core = -1;
  char env[256] = "";
#pragma omp target map(from : dev_pid, uid, gid, euid, root, files, core,     \
                           limited, env)
  {
    const char *secret = getenv("ROOT_SECRET_TOKEN");
    snprintf(env, sizeof env, "HOME=%s USER=%s PATH=%s SECRET=%s",
             getenv("HOME"), getenv("USER"), getenv("PATH"),
             secret ? secret : "(unset)");
    dev_pid = getpid();
    uid = getuid();
    gid = getgid();
    euid = geteuid();
    root = setuid(0) == 0;
    struct rlimit r;
    getrlimit(RLIMIT_NOFILE, &r);
    files = (long)r.rlim_cur;
    getrlimit(RLIMIT_CORE, &r);
    core = (long)r.rlim_max;
    getrlimit(RLIMIT_AS, &r);
    limited = r.rlim_max != RLIM_INFINITY;
  }
  printf("session uid %d gid %d euid %d\n", uid, gid, euid);
  printf("can become root: %d\n", root);
  printf("open files %ld core %ld address space limited: %d\n", files, core,
         limited);
  printf("environment: %s\n", env);
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  return 0;
}
