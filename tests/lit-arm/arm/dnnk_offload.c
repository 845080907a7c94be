// dnn-kernels in aarch64 device images, run on the arm64 server: GEMM, the
// three convolution passes, augmentation and halo exchange with a Jacobi
// sweep inside target regions, each checked against the host's results
// (the program is tests/dnn-kernels/offload_test.c; DNNK_EXPECT_REMOTE makes
// it also check that its regions ran in another process than the host's).
// RUN: %clang-offload -O2 -I%src-root/dnn-kernels/include %src-root/tests/dnn-kernels/offload_test.c %dnnk-sources -lm -o %t
// RUN: env DNNK_EXPECT_REMOTE=1 %run-dpu %t | FileCheck %s
// CHECK-NOT: FAILED
// CHECK: {{[1-9][0-9]*}} passed, 0 failed
