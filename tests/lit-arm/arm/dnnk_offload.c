// dnn-kernels in aarch64 device images, run on the arm64 server: GEMM, the
// three convolution passes, augmentation and halo exchange with a Jacobi
// sweep inside target regions, each checked against the host's results
// (the program is tests/dnn-kernels/offload_test.c; DNNK_EXPECT_REMOTE makes
// it also check that its regions ran in another process than the host's).
// RUN: %clang-offload -O2 -I%src-root/dnn-kernels/include %src-root/tests/dnn-kernels/offload_test.c %src-root/dnn-kernels/src/augment.c %src-root/dnn-kernels/src/conv.c %src-root/dnn-kernels/src/elementwise.c %src-root/dnn-kernels/src/fc.c %src-root/dnn-kernels/src/gemm.c %src-root/dnn-kernels/src/gemm_micro.c %src-root/dnn-kernels/src/gemm_pack.c %src-root/dnn-kernels/src/halo.c %src-root/dnn-kernels/src/im2col.c %src-root/dnn-kernels/src/jacobi.c %src-root/dnn-kernels/src/philox.c %src-root/dnn-kernels/src/pool.c %src-root/dnn-kernels/src/softmax.c -lm -o %t
// RUN: env DNNK_EXPECT_REMOTE=1 %run-dpu %t | FileCheck %s
// CHECK-NOT: FAILED
// CHECK: {{[1-9][0-9]*}} passed, 0 failed
