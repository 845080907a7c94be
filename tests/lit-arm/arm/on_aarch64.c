// Proof that target regions run on aarch64: the host part of the program is x86_64, the
// region runs compiled for aarch64 (__aarch64__ in the device pass), on a machine whose
// uname -m is aarch64, in another process than the host's (the server's session in the
// guest), and the server reports ISA aarch64 to `ompdpu info`. The embedded device image
// is an AArch64 ELF file.
// RUN: rm -rf %t.d && mkdir -p %t.d && cd %t.d && %clang-offload %s -o %t -save-temps
// RUN: %llvm-readelf -h %t.d/%aarch64-image | FileCheck %s --check-prefix=IMAGE
// RUN: %llvm-readelf -h %t | FileCheck %s --check-prefix=HOST
// RUN: %run-dpu %t | FileCheck %s
// RUN: %vm run --devices 2 -- %ompdpu info | FileCheck %s --check-prefix=INFO
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

// The same region body in both passes (an #ifdef inside a region would give host and
// device different argument lists): only the macro's value differs.
#if defined(__aarch64__)
#define COMPILED_FOR "aarch64"
#elif defined(__x86_64__)
#define COMPILED_FOR "x86_64"
#else
#define COMPILED_FOR "other"
#endif

int main(void) {
  int host_pid = getpid(), dev_pid = -1, initial = -1, procs = 0;
  char machine[65] = "", compiled[16] = "";
  struct utsname host;
  uname(&host);
#pragma omp target map(from : dev_pid, initial, procs, machine, compiled)
  {
    struct utsname u;
    uname(&u);
    strncpy(machine, u.machine, sizeof machine - 1);
    strncpy(compiled, COMPILED_FOR, sizeof compiled - 1);
    dev_pid = getpid();
    initial = omp_is_initial_device();
    procs = omp_get_num_procs();
  }
  printf("host machine: %s, host code compiled for: %s\n", host.machine, COMPILED_FOR);
  // CHECK: host machine: x86_64, host code compiled for: x86_64
  printf("region machine: %s, region compiled for: %s\n", machine, compiled);
  // CHECK-NEXT: region machine: aarch64, region compiled for: aarch64
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  // CHECK-NEXT: on-server: 1
  printf("initial device in region: %d, cores: %d\n", initial, procs);
  // CHECK-NEXT: initial device in region: 0, cores: {{[1-9][0-9]*}}
  return 0;
}
// IMAGE: Class: ELF64
// IMAGE: Type: DYN
// IMAGE: Machine: AArch64
// HOST: Machine: Advanced Micro Devices X86-64
// INFO: device 0 {{.*}}:18515 {{.*}}ready isa aarch64 {{.*}}host ompdpu-vm
// INFO: device 1 {{.*}}:18516 {{.*}}ready isa aarch64 {{.*}}host ompdpu-vm
