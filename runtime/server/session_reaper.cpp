//===- session_reaper.cpp - Wait for session processes --------------------===//
#include "server/session_reaper.h"

#include "common/log.h"
#include "server/session_launcher.h"
#include "server/session_leftovers.h"

#include <cerrno>
#include <sys/wait.h>

namespace ompdpu::server {

void SessionReaper::track(pid_t Pid, uid_t Uid,
                          std::vector<std::string> ShmFiles) {
  Unreaped[Pid] = {Uid, std::move(ShmFiles)};
}

std::optional<SessionEvent> SessionReaper::next() {
  // Looked at before it is waited for: while it is a zombie its pid, which
  // names its process group, cannot be another process's.
  siginfo_t Info{};
  if (waitid(P_ALL, 0, &Info, WEXITED | WSTOPPED | WNOHANG | WNOWAIT) != 0 ||
      Info.si_pid <= 0)
    return std::nullopt;
  pid_t Pid = Info.si_pid;
  if (Unreaped.count(Pid) && Info.si_code != CLD_STOPPED)
    killSessionGroup(Pid);
  SessionEvent E;
  E.Pid = Pid;
  if (waitpid(Pid, &E.Status, WNOHANG | WUNTRACED) != Pid)
    return std::nullopt;
  if (WIFSTOPPED(E.Status)) {
    E.StopSignal = WSTOPSIG(E.Status);
    killSessionGroup(Pid);
    return E;
  }
  reaped(Pid);
  return E;
}

void SessionReaper::killAll() {
  while (!Unreaped.empty()) {
    pid_t Pid = Unreaped.begin()->first;
    killSessionGroup(Pid);
    pid_t R = waitpid(Pid, nullptr, 0);
    if (R < 0 && errno == EINTR)
      continue;
    if (R == Pid)
      reaped(Pid);
    else
      Unreaped.erase(Pid); // not our child any more
  }
  while (waitpid(-1, nullptr, WNOHANG) > 0) {
  }
}

void SessionReaper::reaped(pid_t Pid) {
  auto It = Unreaped.find(Pid);
  if (It == Unreaped.end())
    return;
  removeLibompRegistration(Pid, It->second.Uid);
  if (size_t N = removeSharedMemoryFiles(It->second.ShmFiles, It->second.Uid);
      N && Verbose)
    log(LogLevel::Info, "session %d left %zu shared memory file%s: removed",
        static_cast<int>(Pid), N, N == 1 ? "" : "s");
  Unreaped.erase(It);
}

} // namespace ompdpu::server
