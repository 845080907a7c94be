// One of two configured DPUs does not answer at start-up: the other keeps
// its device number, and the silent one keeps its own, so that device(k)
// still means the k-th DPU. A region for the silent one fails with an
// error naming it and the program stops, never running the region on the
// host or on another DPU in its place (libomptarget's policy once a device
// is available, also without OMP_TARGET_OFFLOAD=mandatory).
// RUN: %clang-offload %s -o %t
// RUN: not %python %S/Inputs/with_server.py %server -- env \
// RUN:   OMP_TARGET_OFFLOAD=mandatory %ompdpu run --devices 127.0.0.1:1,{addr} \
// RUN:   -- %t 1 0 > %t.first 2>&1
// RUN: FileCheck %s --check-prefix=FIRST < %t.first
// RUN: not %python %S/Inputs/with_server.py %server -- env \
// RUN:   OMP_TARGET_OFFLOAD=mandatory %ompdpu run --devices {addr},127.0.0.1:1 \
// RUN:   -- %t 0 1 > %t.last 2>&1
// RUN: FileCheck %s --check-prefix=LAST < %t.last
// RUN: not %python %S/Inputs/with_server.py %server -- \
// RUN:   %ompdpu run --devices 127.0.0.1:1,{addr} -- %t 1 0 > %t.default 2>&1
// RUN: FileCheck %s --check-prefix=DEFAULT < %t.default
// A program started by one that found the same DPU silent (it inherits the
// environment, where the plugin's copies leave notes for each other) still
// numbers its devices the same way.
// RUN: not %python %S/Inputs/with_server.py %server -- env \
// RUN:   OMP_TARGET_OFFLOAD=mandatory %ompdpu run --devices 127.0.0.1:1,{addr} \
// RUN:   -- %t spawn 1 0 > %t.child 2>&1
// RUN: FileCheck %s --check-prefix=CHILD < %t.child
#include <ompdpu.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void run_on(int dev) {
  int host_pid = getpid(), dev_pid = -1;
#pragma omp target device(dev) map(from : dev_pid)
  dev_pid = getpid();
  printf("device %d on-server: %d\n", dev, dev_pid > 0 && dev_pid != host_pid);
  fflush(stdout);
}

int main(int argc, char **argv) {
  if (argc == 4 && !strcmp(argv[1], "spawn")) {
    (void)ompdpu_num_devices(); // this process meets the silent DPU first
    pid_t Child = fork();
    if (Child == 0) {
      execl(argv[0], argv[0], argv[2], argv[3], (char *)NULL);
      _exit(127);
    }
    int Status = 0;
    waitpid(Child, &Status, 0);
    return WIFEXITED(Status) ? WEXITSTATUS(Status) : 1;
  }
  if (argc < 3)
    return 2;
  printf("dpus: %d, dpu 1 is device %d\n", ompdpu_num_devices(),
         ompdpu_device(1));
  fflush(stdout);
  run_on(atoi(argv[1])); // the DPU that answers
  run_on(atoi(argv[2])); // the one that does not
  return 0;
}

// The silent DPU's error comes when libomptarget first sets it up: when
// ompdpu_num_devices() looks for the DPUs among the devices, or at its
// first region.
// FIRST: ompdpu error: device 0 (127.0.0.1:1): cannot connect: {{.+}}
// FIRST-DAG: device 0 (127.0.0.1:1): {{.*}}not connected: unreachable when the program started: cannot connect: {{.+}}
// FIRST-DAG: dpus: 2, dpu 1 is device 1
// FIRST-DAG: device 1 on-server: 1
// FIRST: failure of target construct while offloading is mandatory
// FIRST-NOT: device 0 on-server

// LAST: ompdpu error: device 1 (127.0.0.1:1): cannot connect: {{.+}}
// LAST-DAG: device 1 (127.0.0.1:1): {{.*}}not connected: unreachable when the program started: cannot connect: {{.+}}
// LAST-DAG: dpus: 2, dpu 1 is device 1
// LAST-DAG: device 0 on-server: 1
// LAST: failure of target construct while offloading is mandatory
// LAST-NOT: device 1 on-server

// DEFAULT: ompdpu note: device 0 (127.0.0.1:1): cannot connect: {{.+}}
// DEFAULT-DAG: device 0 (127.0.0.1:1): {{.*}}not connected: unreachable when the program started: cannot connect: {{.+}}
// DEFAULT-DAG: dpus: 2, dpu 1 is device 1
// DEFAULT-DAG: device 1 on-server: 1
// DEFAULT: failure of target construct while offloading is mandatory
// DEFAULT-NOT: device 0 on-server

// CHILD-DAG: dpus: 2, dpu 1 is device 1
// CHILD-DAG: device 1 on-server: 1
// CHILD: failure of target construct while offloading is mandatory
// CHILD-NOT: device 0 on-server
