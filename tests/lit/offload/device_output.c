// What kernels write to stdout and stderr reaches the program's own stdout
// and stderr, in order with what the host prints around the regions (it
// went to the server's terminal before): printf, puts, putchar, perror,
// write(2), from a parallel loop inside the region, from a nowait region,
// and more than the server's 1 MiB output buffer from one kernel.
// RUN: %clang-offload %s -o %t
// RUN: %run-dpu %t > %t.out 2> %t.err
// RUN: FileCheck %s < %t.out
// RUN: FileCheck %s --check-prefix=ERR < %t.err
// RUN: %run-dpu %t big | wc -c | FileCheck %s --check-prefix=BIG
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
  int host_pid = getpid();
  if (argc > 1 && !strcmp(argv[1], "big")) {
    // 40,000 lines of 100 bytes: 4 MB, four times the server's buffer.
#pragma omp target
    for (int i = 0; i < 40000; ++i)
      printf("%099d\n", i);
    return 0;
    // BIG: {{^}}4000000{{$}}
  }
  // CHECK: host before
  printf("host before\n");
  int dev_pid = -1;
#pragma omp target map(from : dev_pid)
  {
    dev_pid = getpid();
    printf("device printf %d\n", 42);
    puts("device puts");
    putchar('!');
    putchar('\n');
    errno = 0;
    perror("device perror");
    const char raw[] = "device raw write\n";
    ssize_t n = write(1, raw, sizeof raw - 1);
    (void)n;
  }
  // CHECK-NEXT: device printf 42
  // CHECK-NEXT: device puts
  // CHECK-NEXT: !
  // CHECK-NEXT: device raw write
  // CHECK-NEXT: host after first region
  // ERR: device perror: Success
  printf("host after first region\n");

  // A short kernel, run often enough to run on the server's loop thread:
  // its raw writes still come before the host's next line.
  for (int r = 0; r < 5; ++r) {
#pragma omp target firstprivate(r)
    {
      char line[] = "raw round 0\n";
      line[10] = (char)('0' + r);
      ssize_t n = write(1, line, sizeof line - 1);
      (void)n;
    }
    printf("host after round %d\n", r);
  }
  // CHECK-NEXT: raw round 0
  // CHECK-NEXT: host after round 0
  // CHECK-NEXT: raw round 1
  // CHECK-NEXT: host after round 1
  // CHECK-NEXT: raw round 2
  // CHECK-NEXT: host after round 2
  // CHECK-NEXT: raw round 3
  // CHECK-NEXT: host after round 3
  // CHECK-NEXT: raw round 4
  // CHECK-NEXT: host after round 4

  int sum = 0;
#pragma omp target map(tofrom : sum)
#pragma omp parallel for reduction(+ : sum)
  for (int i = 0; i < 8; ++i) {
    printf("parallel line %d\n", i);
    sum += i;
  }
  // CHECK-COUNT-8: parallel line {{[0-7]}}
  // CHECK-NEXT: host after parallel sum 28
  printf("host after parallel sum %d\n", sum);

#pragma omp target nowait
  printf("device nowait\n");
#pragma omp taskwait
  // CHECK-NEXT: device nowait
  // CHECK-NEXT: host after taskwait
  printf("host after taskwait\n");
  // CHECK-NEXT: on-server: 1
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  return 0;
}
