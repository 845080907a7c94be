/* One target region; prints whether it ran in another process (the
   server's) than the program's. */
#include <stdio.h>
#include <unistd.h>

int main(void) {
  int host_pid = getpid(), dev_pid = -1;
#pragma omp target map(from : dev_pid)
  dev_pid = getpid();
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  return 0;
}
