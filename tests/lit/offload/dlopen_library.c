// Target regions in a shared library that a program without OpenMP loads
// with dlopen: the plugin connects from the library's constructor, under
// the dynamic loader's lock, and must not wait for another thread that
// needs that lock (UCX loads its transports with dlopen). It hung before.
// RUN: %clang-offload -fPIC -shared %S/Inputs/dlopen_lib.c -o %t.so
// RUN: %host-cc %s -ldl -o %t
// RUN: %run-dpu2 %t %t.so | FileCheck %s
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv) {
  void *Lib = dlopen(argv[1], RTLD_NOW);
  if (!Lib) {
    printf("dlopen: %s\n", dlerror());
    return 1;
  }
  int (*Scale)(int *, int, int, int *) =
      (int (*)(int *, int, int, int *))dlsym(Lib, "scale_on_device");
  int Data[64], DevPid = -1;
  for (int I = 0; I < 64; ++I)
    Data[I] = I;
  // CHECK: loaded
  printf("loaded\n");
  Scale(Data, 64, 3, &DevPid);
  Scale(Data, 64, 2, &DevPid);
  long Sum = 0;
  for (int I = 0; I < 64; ++I)
    Sum += Data[I];
  // CHECK-NEXT: sum 12096
  printf("sum %ld\n", Sum);
  // CHECK-NEXT: on-server: 1
  printf("on-server: %d\n", DevPid > 0 && DevPid != getpid());
  dlclose(Lib);
  return 0;
}
