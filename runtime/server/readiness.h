//===- readiness.h - tell systemd the server is ready -----------*- C++ -*-===//
#pragma once

#include <string>

namespace ompdpu::server {

/// Send READY=1 to systemd (Type=notify) once the server listens on Where;
/// does nothing when NOTIFY_SOCKET is unset (not started by systemd).
void notifyReady(const std::string &Where);

} // namespace ompdpu::server
