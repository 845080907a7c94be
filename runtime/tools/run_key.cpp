//===- run_key.cpp - A key for the emulated DPUs of one run ---------------===//
#include "tools/run_key.h"

#include "auth/key_file.h"
#include "common/log.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <initializer_list>
#include <sys/wait.h>
#include <unistd.h>

namespace ompdpu::tools {

Expected<std::unique_ptr<RunKey>> RunKey::create() {
  if (const char *Given = std::getenv("OMPDPU_KEY"); Given && *Given) {
    auto K = auth::loadKeyFile(Given);
    if (!K)
      return K.status().withContext("OMPDPU_KEY");
    return std::unique_ptr<RunKey>(new RunKey("", Given));
  }
  const char *Tmp = std::getenv("TMPDIR");
  std::string Templ =
      std::string(Tmp && *Tmp ? Tmp : "/tmp") + "/ompdpu-run-key.XXXXXX";
  if (!mkdtemp(Templ.data())) // mode 0700
    return Status::error(format("cannot make a directory for this run's key "
                                "(%s): %s",
                                Templ.c_str(), std::strerror(errno)));
  std::string File = Templ + "/key";
  if (Status S = auth::createKeyFile(File); !S.ok()) {
    rmdir(Templ.c_str());
    return S;
  }
  std::unique_ptr<RunKey> Key(new RunKey(Templ, File));
  Key->startJanitor();
  return Key;
}

void RunKey::startJanitor() {
  int P[2];
  if (pipe2(P, O_CLOEXEC) != 0)
    return; // the key is still removed on every orderly end
  const char *F = File.c_str(), *D = Dir.c_str();
  pid_t Pid = fork();
  if (Pid == 0) {
    // Async-signal-safe calls only: the maker may have threads.
    for (int Sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT})
      signal(Sig, SIG_IGN); // a terminal's ^C is for the run, not for us
    close(P[1]);
    char B;
    while (read(P[0], &B, 1) < 0 && errno == EINTR) {
    }
    unlink(F);
    rmdir(D);
    _exit(0);
  }
  close(P[0]);
  if (Pid < 0) {
    close(P[1]);
    return;
  }
  JanitorFd = P[1];
  Janitor = Pid;
}

RunKey::~RunKey() {
  if (Dir.empty())
    return; // the user's key
  unlink(File.c_str());
  rmdir(Dir.c_str());
  if (JanitorFd >= 0) {
    close(JanitorFd);
    while (waitpid(Janitor, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
}

} // namespace ompdpu::tools
