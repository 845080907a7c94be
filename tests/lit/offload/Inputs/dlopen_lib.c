// The target regions of dlopen_library.c: a shared library whose
// constructor registers its device image while dlopen holds the dynamic
// loader's lock.
#include <unistd.h>

int scale_on_device(int *data, int n, int factor, int *dev_pid) {
  int pid = -1;
#pragma omp target map(tofrom : data [0:n]) map(from : pid)
  {
    pid = getpid();
    for (int i = 0; i < n; ++i)
      data[i] *= factor;
  }
  *dev_pid = pid;
  return 0;
}
