//===- key_command.h - `ompdpu key` -----------------------------*- C++ -*-===//
#pragma once

namespace ompdpu::tools {

/// `ompdpu key create [--force] FILE`: a new key file (mode 0600) for a
/// server's
/// --key and its clients' OMPDPU_KEY. The exit status.
int cmdKey(int Argc, char **Argv);

} // namespace ompdpu::tools
