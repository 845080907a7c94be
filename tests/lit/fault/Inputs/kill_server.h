/* Shared by the server-kill fault tests: find the emulated servers that
 * `ompdpu run --emulate N` started (OMPDPU_SERVER_PIDS) and kill them with
 * SIGKILL from a host thread after a delay, while the main thread is busy
 * offloading. */
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define MAX_PIDS 256

struct kill_plan {
  int delay_ms;
  int whole_tree; /* also kill every descendant (session processes) */
};

static int server_pid_from_env(void) {
  const char *pids = getenv("OMPDPU_SERVER_PIDS");
  if (!pids || !*pids)
    return -1;
  return atoi(pids); /* first device's server */
}

/* Children of pid, from /proc/<pid>/task/<tid>/children. */
static int children_of(int pid, int *out, int max) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/task", pid);
  DIR *d = opendir(path);
  if (!d)
    return 0;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) && n < max) {
    if (e->d_name[0] == '.')
      continue;
    char cpath[128];
    snprintf(cpath, sizeof cpath, "/proc/%d/task/%s/children", pid, e->d_name);
    FILE *f = fopen(cpath, "r");
    if (!f)
      continue;
    int c;
    while (n < max && fscanf(f, "%d", &c) == 1)
      out[n++] = c;
    fclose(f);
  }
  closedir(d);
  return n;
}

static int descendants_of(int pid, int *out, int max) {
  int n = children_of(pid, out, max);
  for (int i = 0; i < n && n < max; ++i)
    n += descendants_of(out[i], out + n, max - n);
  return n;
}

static void *killer(void *arg) {
  struct kill_plan *plan = (struct kill_plan *)arg;
  struct timespec ts = {plan->delay_ms / 1000, (plan->delay_ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
  int pid = server_pid_from_env();
  int desc[MAX_PIDS];
  int n = plan->whole_tree ? descendants_of(pid, desc, MAX_PIDS) : 0;
  printf("killing server%s\n", plan->whole_tree ? " and its session processes" : "");
  fflush(stdout);
  kill(pid, SIGKILL);
  for (int i = 0; i < n; ++i)
    kill(desc[i], SIGKILL);
  return NULL;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}
