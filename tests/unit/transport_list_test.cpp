// Which UCX_TLS lists may load UCX's shared-memory transports: the worker
// sets their error handling only then (otherwise UCX prints a warning about
// an unused setting on the program's stdout).
#include "transport/shm_files.h"
#include "transport/transport_list.h"

#include <gtest/gtest.h>

using ompdpu::transport::isSharedMemoryFile;
using ompdpu::transport::mayUseSharedMemory;

TEST(TransportList, ListsThatMayLoadSharedMemory) {
  for (const char *L :
       {"", "all", "sm,self", "shm", "mm", "posix", "sysv", "tcp,sysv",
        "rc,\\posix", "^tcp", "^posix", "^cma,rc", "self,sm,rc_x"})
    EXPECT_TRUE(mayUseSharedMemory(L)) << "'" << L << "'";
}

TEST(TransportList, ListsThatCannot) {
  for (const char *L : {"tcp", "tcp,self", "rc,ud", "self", "cma", "^sm",
                        "^shm,tcp", "^mm", "^posix,sysv", "tcp,,self"})
    EXPECT_FALSE(mayUseSharedMemory(L)) << "'" << L << "'";
}

// The supervisor removes only what a session may name as its UCX segments.
TEST(SharedMemoryFiles, OnlyUcxSegmentNamesInDevShm) {
  EXPECT_TRUE(isSharedMemoryFile("/dev/shm/ucx_shm_posix_385fd55e"));
  for (const char *P :
       {"/dev/shm/ucx_shm_posix_", "/etc/passwd", "/dev/shm/other",
        "/dev/shm/ucx_shm_posix_../../etc/passwd",
        "/dev/shm/ucx_shm_posix_12/x", "/tmp/ucx_shm_posix_12",
        "/dev/shm/ucx_shm_posix_12 (deleted)"})
    EXPECT_FALSE(isSharedMemoryFile(P)) << P;
}
