# shellcheck shell=bash
# The user's project of tests/packaging (sourced): write_example DIR writes a
# small OpenMP program and its CMake project, which knows ompdpu only through
# find_package(ompdpu).
write_example() {
  mkdir -p "$1"
  cat >"$1/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.20)
project(where_it_runs C)
find_package(OpenMP REQUIRED)
find_package(ompdpu 0.1 REQUIRED)
add_executable(where_it_runs where_it_runs.c)
target_link_libraries(where_it_runs PRIVATE OpenMP::OpenMP_C ompdpu::ompdpu)
ompdpu_add_device_images(where_it_runs EMULATE)
# The same program for a BlueField's Arm cores (aarch64 device images).
add_executable(where_it_runs_dpu where_it_runs.c)
target_link_libraries(where_it_runs_dpu PRIVATE OpenMP::OpenMP_C ompdpu::ompdpu)
ompdpu_add_device_images(where_it_runs_dpu)
CMAKE
  cat >"$1/where_it_runs.c" <<'C'
/* Sums 1..n on DPU 0 and says which process ran the region. */
#include <ompdpu.h>
#include <omp.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
  enum { N = 1000 };
  int data[N];
  for (int i = 0; i < N; ++i)
    data[i] = i + 1;
  long sum = 0;
  int pid = 0, ppid = 0, uid = -1, initial = 1;
  int dev = ompdpu_device(0);
  if (dev < 0) {
    printf("no DPU\n");
    return 1;
  }
#pragma omp target device(dev) map(to : data) map(from : sum, pid, ppid, uid, initial)
  {
    long s = 0;
    for (int i = 0; i < N; ++i)
      s += data[i];
    sum = s;
    pid = getpid();
    ppid = getppid();
    uid = (int)getuid();
    initial = omp_is_initial_device();
  }
  printf("sum %ld on device %d of %d DPUs: initial device %d\n", sum, dev,
         ompdpu_num_devices(), initial);
  printf("region in process %d (child of %d) as uid %d; program is process "
         "%d\n",
         pid, ppid, uid, (int)getpid());
  return sum == (long)N * (N + 1) / 2 && !initial && pid != getpid() ? 0 : 1;
}
C
}
