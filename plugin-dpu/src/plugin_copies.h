//===- plugin_copies.h - What one plugin copy tells the other ---*- C++ -*-===//
//
// Both copies of the plugin (the x86_64 and aarch64 names) may be loaded in
// one process, one after the other. They share what the first found through
// the environment, marked with the process id: a child process inherits the
// environment and must start afresh.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <optional>
#include <string>

namespace ompdpu::plugin {

/// True for the first copy to ask about What (an address, a note's name).
bool firstToReport(const std::string &What);
/// Addr did not answer this process (Why: the failure), so that the other
/// copy does not wait for it a second time.
void noteUnreachable(const std::string &Addr, const std::string &Why);
/// Why Addr did not answer the other copy, if it did not.
std::optional<std::string> knownUnreachable(const std::string &Addr);

} // namespace ompdpu::plugin
