//===- info_command.h - `ompdpu info` ---------------------------*- C++ -*-===//
#pragma once

#include <functional>

namespace ompdpu::tools {

/// `ompdpu info [--devices LIST] [--cluster]`: where the devices come from,
/// which of them this process uses and each one's state (every node's DPUs
/// of the cluster map with --cluster). PrintPlugins lists the plugin
/// layouts. The exit status: 1 when a DPU does not answer.
int cmdInfo(int Argc, char **Argv, const std::function<void()> &PrintPlugins);

} // namespace ompdpu::tools
