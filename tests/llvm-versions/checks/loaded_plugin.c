// A program built with LLVM N's clang runs with LLVM N's own libomptarget,
// which loads ompdpu's plugin under the first name it tries (16: the
// .nextgen.so one; 19: none, `ompdpu run` puts libomptarget 19 rebuilt with
// the plugin inside first), and the region runs in the server.
// RUN: %clang-offload %s -o %t
// RUN: %run-dpu %t | FileCheck %s --check-prefix=LLVM%llvm-major
#define _GNU_SOURCE
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

// Print the libomptarget and plugin files loaded, in load order.
static int show(struct dl_phdr_info *Info, size_t Size, void *Data) {
  (void)Size;
  (void)Data;
  const char *Base = strrchr(Info->dlpi_name, '/');
  if (Base && strncmp(Base + 1, "libomptarget", 12) == 0)
    printf("loaded: %s\n", Info->dlpi_name);
  return 0;
}

int main(void) {
  int host_pid = getpid(), dev_pid = -1;
#pragma omp target map(from : dev_pid)
  dev_pid = getpid();
  printf("on-server: %d\n", dev_pid > 0 && dev_pid != host_pid);
  dl_iterate_phdr(show, NULL);
  return 0;
}
// LLVM14: on-server: 1
// LLVM14-NEXT: loaded: /usr/lib/llvm-14/lib/libomptarget.so
// LLVM14: loaded: {{.*}}/lib/ompdpu/emulated/libomptarget.rtl.x86_64.so
// LLVM14-NOT: nextgen

// LLVM15: on-server: 1
// LLVM15-NEXT: loaded: {{.*}}/usr/lib/llvm-15/lib/libomptarget.so.15
// LLVM15: loaded: {{.*}}/lib/ompdpu/emulated/libomptarget.rtl.x86_64.so
// LLVM15-NOT: nextgen

// LLVM16: on-server: 1
// LLVM16-NEXT: loaded: {{.*}}/usr/lib/llvm-16/lib/libomptarget.so.16
// LLVM16: loaded: {{.*}}/lib/ompdpu/emulated/libomptarget.rtl.x86_64.nextgen.so
// LLVM16-NOT: rtl.x86_64.so

// LLVM17: on-server: 1
// LLVM17-NEXT: loaded: /usr/lib/llvm-17/lib/libomptarget.so.17
// LLVM17: loaded: {{.*}}/lib/ompdpu/llvm17/emulated/libomptarget.rtl.x86_64.so
// LLVM17-NOT: nextgen

// LLVM18: on-server: 1
// LLVM18-NEXT: loaded: /opt/libomp-18/usr/lib/llvm-18/lib/libomptarget.so.18.1
// LLVM18: loaded: {{.*}}/lib/ompdpu/llvm18/emulated/libomptarget.rtl.x86_64.so
// LLVM18-NOT: nextgen

// LLVM19: on-server: 1
// LLVM19-NEXT: loaded: {{.*}}/lib/ompdpu/llvm19/libomptarget.so.19.1
// LLVM19-NOT: libomptarget.rtl
