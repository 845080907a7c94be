//===- emulate_command.h - `ompdpu emulate` for other tools -----*- C++ -*-===//
#pragma once

#include <string>

namespace ompdpu::tools {

/// `ompdpu emulate N [options]`: start N emulated DPUs, print where they are
/// as one JSON line, and keep them until told to stop. The exit status.
int cmdEmulate(int Argc, char **Argv, const std::string &ServerExe);

} // namespace ompdpu::tools
