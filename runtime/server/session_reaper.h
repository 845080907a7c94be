//===- session_reaper.h - Wait for session processes ------------*- C++ -*-===//
#pragma once

#include <map>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace ompdpu::server {

/// What became of a session process: it ended (Status as waitpid gives it)
/// or it stopped (StopSignal; it has been killed and its end follows).
struct SessionEvent {
  pid_t Pid = -1;
  int Status = 0;
  int StopSignal = 0;
};

/// The supervisor's session processes until each is waited for: kills what
/// a session leaves running and removes what it leaves in /dev/shm.
class SessionReaper {
public:
  explicit SessionReaper(bool Verbose) : Verbose(Verbose) {}

  /// Watch a started session running as Uid that named ShmFiles.
  void track(pid_t Pid, uid_t Uid, std::vector<std::string> ShmFiles);

  /// The next child that ended or stopped, without blocking. An ended
  /// session's process group is killed and its leftovers removed; a stopped
  /// one is killed with its group (nothing on the DPU would continue it).
  std::optional<SessionEvent> next();

  /// Kill every tracked session and wait for each.
  void killAll();

private:
  void reaped(pid_t Pid);

  struct Unwaited {
    uid_t Uid;
    std::vector<std::string> ShmFiles;
  };
  std::map<pid_t, Unwaited> Unreaped;
  bool Verbose;
};

} // namespace ompdpu::server
