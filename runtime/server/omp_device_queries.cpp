//===- omp_device_queries.cpp - OpenMP's device queries for kernels -------===//
//
// Device images resolve symbols against the server executable first (it
// exports its own), so these answer a kernel's omp_get_device_num() and
// omp_get_num_devices() for the client's device. The server's libomp would
// say 0 for both: it runs no offload runtime. GPU plugins answer the same
// way, from the device environment they set up when they load an image.
//
//===----------------------------------------------------------------------===//
#include "server/device_identity.h"

extern "C" int omp_get_device_num(void) {
  return ompdpu::server::deviceIdentity().Num;
}

extern "C" int omp_get_num_devices(void) {
  return ompdpu::server::deviceIdentity().Count;
}
