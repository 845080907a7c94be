// Which UCX_TLS lists may load UCX's shared-memory transports: the worker
// sets their error handling only then (otherwise UCX prints a warning about
// an unused setting on the program's stdout).
#include "transport/transport_list.h"

#include <gtest/gtest.h>

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
