// An MPI-mode server rank runs one client after another in one process:
// each program must find its device globals as its image defines them, not
// as an earlier client left them. Increments a global and a static one on
// every DPU and prints what each holds (1 when the image is fresh).
#include <omp.h>
#include <stdio.h>
#include <unistd.h>

#pragma omp declare target
int Counter = 0;
static int Hidden = 40;
#pragma omp end declare target

int main(void) {
  int Devices = omp_get_num_devices(), Fresh = 1;
  for (int D = 0; D < Devices; ++D) {
    int Seen = 0, Pid = 0;
#pragma omp target device(D) map(from : Seen, Pid)
    {
      Seen = ++Counter + ++Hidden;
      Pid = getpid();
    }
    printf("device %d: counter and static %d (fresh: 42), on-server: %d\n", D,
           Seen, Pid != getpid());
    Fresh &= Seen == 42 && Pid != getpid();
  }
  printf("fresh globals: %s\n", Fresh ? "yes" : "NO");
  return !Fresh;
}
