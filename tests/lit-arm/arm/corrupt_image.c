// tests/lit/fault/corrupt_image.c with an aarch64 device image: garbled after its 64-byte
// ELF header (still e_machine 183, AArch64, so the aarch64 plugin accepts it), it cannot
// be loaded by the server in the guest: `cannot load image` and a non-zero exit, no
// UCX error. The untouched binary runs.
// RUN: %clang-offload %lit-src/fault/corrupt_image.c -o %t
// RUN: %python %lit-src/fault/Inputs/corrupt_image.py %t %t.bad --objcopy %llvm-objcopy \
// RUN:   2>&1 | FileCheck %s --check-prefix=CORRUPT
// RUN: %run-dpu %t | FileCheck %s --check-prefix=GOOD
// RUN: not %run-dpu %t.bad 2>&1 | FileCheck %s --check-prefix=BAD --implicit-check-not=ERROR

// CORRUPT: corrupt_image: .omp_offloading.device_image{{.*}} e_machine 183
// GOOD: on-server: 1 x: 42
// BAD: ompdpu error: device 0 (10.{{[0-9.]+}}:18515): cannot load image: {{.+}}
// BAD-NOT: on-server:
