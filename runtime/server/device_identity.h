//===- device_identity.h - The device a session kernel runs on -*- C++ -*-===//
#pragma once

#include <cstdint>

namespace ompdpu::server {

/// The client's numbering of this device: its number among its plugin's
/// devices and their count. Kernels read it through omp_get_device_num()
/// and omp_get_num_devices() (omp_device_queries.cpp).
struct DeviceIdentity {
  int32_t Num = 0;
  int32_t Count = 1;
};

/// Set from each LoadImage, before any of the image's kernels can run.
void setDeviceIdentity(DeviceIdentity D);
DeviceIdentity deviceIdentity();

} // namespace ompdpu::server
