//===- host_port.h - HOST:PORT as users write it ----------------*- C++ -*-===//
#pragma once

#include <cstdint>
#include <string>

namespace ompdpu {

/// HOST:PORT, an IPv6 host in brackets (as OMPDPU_DEVICES takes it).
inline std::string hostPortText(const std::string &Host, uint16_t Port) {
  bool Bare6 = Host.find(':') != std::string::npos && Host[0] != '[';
  return (Bare6 ? "[" + Host + "]" : Host) + ":" + std::to_string(Port);
}

} // namespace ompdpu
