//===- run_key.h - A key for the emulated DPUs of one run -----*- C++ -*-===//
//
// Emulated DPUs authenticate their clients like any server: `ompdpu run
// --emulate` and `ompdpu emulate` use the key OMPDPU_KEY names, or make a
// fresh one for the run, give it to the servers (--key) and the program
// (OMPDPU_KEY), and remove it after: also when the run is killed outright,
// by a janitor process that waits for its maker to end.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/status.h"

#include <memory>
#include <string>
#include <sys/types.h>

namespace ompdpu::tools {

class RunKey {
public:
  /// OMPDPU_KEY's key when it is set (checked now), else a new key in a
  /// private directory under $TMPDIR (or /tmp).
  static Expected<std::unique_ptr<RunKey>> create();
  ~RunKey();
  RunKey(const RunKey &) = delete;
  RunKey &operator=(const RunKey &) = delete;
  const std::string &path() const { return File; }

private:
  RunKey(std::string D, std::string F)
      : Dir(std::move(D)), File(std::move(F)) {}
  /// Start the process that removes the key once this one has ended.
  void startJanitor();
  std::string Dir, File;
  int JanitorFd = -1; ///< its pipe: it sees end of file when we are gone
  pid_t Janitor = -1;
};

} // namespace ompdpu::tools
