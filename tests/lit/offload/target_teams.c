// target teams: num_teams/thread_limit, teams distribute covering the whole
// iteration space exactly once, and teams-level state on the device.
// RUN: %clang-offload %s -o %t && %run-dpu %t | FileCheck %s
#include <omp.h>
#include <stdio.h>
#include <unistd.h>

#define N 10000

int main(void) {
  static int owner[N];
  int host_pid = getpid(), dev_pid = -1;
  int nteams = 0, limit = 0;

#pragma omp target teams num_teams(4) thread_limit(2) map(from : owner[0:N], nteams, limit, dev_pid)
  {
    if (omp_get_team_num() == 0) {
      nteams = omp_get_num_teams();
      limit = omp_get_thread_limit();
      dev_pid = getpid();
    }
#pragma omp distribute
    for (int i = 0; i < N; ++i)
      owner[i] = omp_get_team_num() + 1;
  }
  int covered = 1;
  long weighted = 0;
  for (int i = 0; i < N; ++i) {
    if (owner[i] < 1 || owner[i] > nteams)
      covered = 0;
    weighted += i;
  }
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  // CHECK: on-server: 1
  printf("teams-ok: %d limit-ok: %d covered: %d\n", nteams >= 1 && nteams <= 4,
         limit >= 1 && limit <= 2, covered);
  // CHECK-NEXT: teams-ok: 1 limit-ok: 1 covered: 1
  fprintf(stderr, "teams: %d thread limit: %d\n", nteams, limit);

  static double y[N];
  for (int i = 0; i < N; ++i)
    y[i] = 1.0;
  double alpha = 3.0;
#pragma omp target teams distribute parallel for map(tofrom : y[0:N]) map(from : dev_pid)
  for (int i = 0; i < N; ++i) {
    y[i] = alpha * i + y[i];
    if (i == N - 1)
      dev_pid = getpid();
  }
  double s = 0;
  for (int i = 0; i < N; ++i)
    s += y[i];
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  // CHECK-NEXT: on-server: 1
  printf("axpy sum: %.1f\n", s);
  // CHECK-NEXT: axpy sum: 149995000.0
  (void)weighted;
  return 0;
}
