// libomp registers each process in a shared-memory object named after its
// pid and uid (/dev/shm/__KMP_REGISTERED_LIB_<pid>_<uid>) and removes it only
// when it shuts down; sessions end with _exit() or SIGKILL, so the server
// must remove theirs: a long-lived DPU server would otherwise keep one per
// client. Checked for a session that ends while its server keeps running
// (the outer program runs a client and waits for it) and for one that ends
// with its server.
// UNSUPPORTED: arm-vm
// RUN: %clang-offload %s -o %t
// RUN: %run-dpu %t outer %t.1 | FileCheck %s
// RUN: %run-dpu %t session %t.2
// RUN: %run-no-server %t gone %t.2 | FileCheck %s --check-prefix=STOPPED
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void registration(char *Name, size_t Len, int Pid, int Uid) {
  snprintf(Name, Len, "/dev/shm/__KMP_REGISTERED_LIB_%d_%d", Pid, Uid);
}

// Runs a region that starts the session's libomp; writes its session's pid,
// uid and whether libomp's object existed then.
static int session(const char *File) {
  int HostPid = getpid(), Pid = -1, Uid = -1, Present = -1;
#pragma omp target map(from : Pid, Uid, Present)
  {
    int Threads = 0;
#pragma omp parallel reduction(+ : Threads)
    Threads += 1;
    Pid = Threads > 0 ? getpid() : -1;
    Uid = (int)getuid();
    char Name[96];
    registration(Name, sizeof Name, Pid, Uid);
    Present = access(Name, F_OK) == 0;
  }
  FILE *F = fopen(File, "w");
  if (!F || Pid == HostPid)
    return 3; // no file, or not on the server
  fprintf(F, "%d %d %d\n", Pid, Uid, Present);
  return fclose(F) ? 3 : 0;
}

static int gone(const char *File) {
  FILE *F = fopen(File, "r");
  int Pid = -1, Uid = -1, Present = -1;
  if (!F || fscanf(F, "%d %d %d", &Pid, &Uid, &Present) != 3)
    return 2;
  fclose(F);
  char Name[96];
  registration(Name, sizeof Name, Pid, Uid);
  // The supervisor reaps a session within about a second of its client.
  int Gone = 0;
  for (int K = 0; K < 100 && !Gone; ++K) {
    Gone = access(Name, F_OK) != 0;
    if (!Gone) {
      struct timespec T = {0, 50 * 1000 * 1000};
      nanosleep(&T, NULL);
    }
  }
  printf("registered while it ran: %d, gone after: %d\n", Present, Gone);
  // CHECK: registered while it ran: 1, gone after: 1
  // STOPPED: registered while it ran: 1, gone after: 1
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 3)
    return 2;
  if (!strcmp(argv[1], "session"))
    return session(argv[2]);
  if (!strcmp(argv[1], "gone"))
    return gone(argv[2]);
  // outer: a client of its own runs and ends; the server runs on.
  pid_t Child = fork();
  if (Child == 0) {
    execl(argv[0], argv[0], "session", argv[2], (char *)NULL);
    _exit(127);
  }
  int Status = 0;
  if (Child < 0 || waitpid(Child, &Status, 0) != Child || !WIFEXITED(Status) ||
      WEXITSTATUS(Status))
    return 4;
  return gone(argv[2]);
}
