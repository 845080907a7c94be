// A kernel runs as the server's user but cannot signal, trace or read any
// process but its own session: not its supervisor, not another session
// (here, device 0's session, from a kernel on device 1). The probes use
// signal 0 (no effect when allowed), except one real SIGKILL at the
// supervisor, which must survive it: later regions still run. Nor can it
// make the supervisor the owner of a descriptor's I/O signals (F_SETOWN,
// F_SETOWN_EX, FIOSETOWN: any signal, by way of F_SETSIG), fake terminal
// input (TIOCSTI), or reach the server's terminal or log: its stdin is
// /dev/null and it has no controlling terminal. Memory is
// protected from sessions without capabilities; a session of a root server
// keeps root's when its client is on the same machine (cma needs them), and
// the test says so instead.
// RUN: %clang-offload %s -o %t
// RUN: %run-dpu2 %t 2>&1 | FileCheck %s
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ompdpu.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <unistd.h>

#pragma omp declare target
/* errno of a failed call, 0 when it succeeded. */
static int outcome(long rc) { return rc == -1 ? errno : 0; }
/* -1: readable, by a session that holds capabilities. */
static int openMem(int pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/mem", pid);
  int fd = open(path, O_RDONLY);
  if (fd >= 0)
    close(fd);
  if (fd < 0)
    return errno;
  char line[256];
  unsigned long long caps = 0;
  FILE *f = fopen("/proc/self/status", "r");
  while (f && fgets(line, sizeof line, f))
    sscanf(line, "CapEff: %llx", &caps);
  if (f)
    fclose(f);
  return caps ? -1 : 0;
}
/* The descriptor fd's I/O signals sent to pid: through fcntl (how 0),
 * F_SETOWN_EX (1) or ioctl (2). */
static int setOwner(int pid, int how) {
  int p[2];
  if (pipe(p) != 0)
    return errno;
  struct f_owner_ex owner = {F_OWNER_PID, pid};
  long rc = how == 0   ? fcntl(p[0], F_SETOWN, pid)
            : how == 1 ? fcntl(p[0], F_SETOWN_EX, &owner)
                       : ioctl(p[0], FIOSETOWN, &pid);
  int r = outcome(rc);
  close(p[0]);
  close(p[1]);
  return r;
}
/* "null" when fd 0 is /dev/null. */
static const char *stdinKind(void) {
  struct stat a, b;
  return fstat(0, &a) == 0 && stat("/dev/null", &b) == 0 &&
                 a.st_rdev == b.st_rdev && S_ISCHR(a.st_mode)
             ? "null"
             : "something else";
}
static const char *memText(int r) {
  return r == -1 ? "readable by a session with capabilities" : strerror(r);
}
#pragma omp end declare target

enum {
  SELF,
  SUP0,
  GROUP,
  ALL,
  TRACE,
  MEM,
  KILL,
  OWN_SELF,
  OWN_SUP,
  OWN_EX,
  OWN_IOCTL,
  STI,
  CTTY,
  OTHER,
  OTHER_MEM,
  N
};

int main(void) {
  int host = getpid(), d0 = ompdpu_device(0), d1 = ompdpu_device(1);
  int r[N], session0 = 0, sup = 0;
  char in[16] = "";
#pragma omp target device(d0) map(from : r[0 : N], session0, sup, in)
  {
    session0 = getpid();
    sup = getppid();
    r[SELF] = outcome(kill(getpid(), 0));
    r[SUP0] = outcome(kill(sup, 0));
    r[GROUP] = outcome(kill(0, 0));
    r[ALL] = outcome(kill(-1, 0));
    r[TRACE] = outcome(ptrace(PTRACE_ATTACH, sup, 0, 0));
    r[MEM] = openMem(sup);
    r[KILL] = outcome(kill(sup, SIGKILL));
    r[OWN_SELF] = setOwner(getpid(), 0);
    r[OWN_SUP] = setOwner(sup, 0);
    r[OWN_EX] = setOwner(sup, 1);
    r[OWN_IOCTL] = setOwner(sup, 2);
    char c = 'x';
    r[STI] = outcome(ioctl(2, TIOCSTI, &c));
    r[CTTY] = outcome(open("/dev/tty", O_RDWR));
    snprintf(in, sizeof in, "%s", stdinKind());
  }
  printf("on server: %d\n", session0 != host && sup != host);
  // CHECK: on server: 1
  printf("own process: %s\n", strerror(r[SELF]));
  // CHECK-NEXT: own process: Success
  printf("supervisor: %s\n", strerror(r[SUP0]));
  // CHECK-NEXT: supervisor: Operation not permitted
  printf("process group: %s\n", strerror(r[GROUP]));
  // CHECK-NEXT: process group: Operation not permitted
  printf("every process: %s\n", strerror(r[ALL]));
  // CHECK-NEXT: every process: Operation not permitted
  printf("ptrace supervisor: %s\n", strerror(r[TRACE]));
  // CHECK-NEXT: ptrace supervisor: Operation not permitted
  printf("supervisor memory: %s\n", memText(r[MEM]));
  // CHECK-NEXT: supervisor memory: {{Permission denied|readable by a session with capabilities}}
  printf("SIGKILL supervisor: %s\n", strerror(r[KILL]));
  // CHECK-NEXT: SIGKILL supervisor: Operation not permitted
  printf("F_SETOWN self: %s\n", strerror(r[OWN_SELF]));
  // CHECK-NEXT: F_SETOWN self: Success
  printf("F_SETOWN supervisor: %s\n", strerror(r[OWN_SUP]));
  // CHECK-NEXT: F_SETOWN supervisor: Operation not permitted
  printf("F_SETOWN_EX supervisor: %s\n", strerror(r[OWN_EX]));
  // CHECK-NEXT: F_SETOWN_EX supervisor: Operation not permitted
  printf("FIOSETOWN supervisor: %s\n", strerror(r[OWN_IOCTL]));
  // CHECK-NEXT: FIOSETOWN supervisor: Operation not permitted
  printf("TIOCSTI: %s\n", strerror(r[STI]));
  // CHECK-NEXT: TIOCSTI: Operation not permitted
  printf("controlling terminal: %s\n", strerror(r[CTTY]));
  // CHECK-NEXT: controlling terminal: No such device or address
  printf("stdin: %s\n", in);
  // CHECK-NEXT: stdin: null

#pragma omp target device(d1) map(tofrom : r[0 : N]) map(to : session0)
  {
    r[OTHER] = outcome(kill(session0, 0));
    r[OTHER_MEM] = openMem(session0);
  }
  printf("other session: %s\n", strerror(r[OTHER]));
  // CHECK-NEXT: other session: Operation not permitted
  printf("other session memory: %s\n", memText(r[OTHER_MEM]));
  // CHECK-NEXT: other session memory: {{Permission denied|readable by a session with capabilities}}

  int again = 0;
#pragma omp target device(d0) map(from : again)
  again = getppid() == sup;
  printf("supervisor alive, session served: %d\n", again);
  // CHECK-NEXT: supervisor alive, session served: 1
  return 0;
}
