// A real ompdpu-server process for a test: started listening on a free
// port of 127.0.0.1 with 64 MiB per client and a key of its own (clients
// get it from config()), stopped at the end.
#pragma once

#include "auth/key_file.h"
#include "common/config.h"
#include "protocol/session_channel.h"

#include <csignal>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace ompdpu::test {

class ServerProcess {
public:
  /// Start the server (with Extra options) and wait (at most 10 s) for its
  /// address; a failed assertion leaves Pid at -1 or the address unset.
  void start(std::vector<std::string> Extra = {}) {
    int Fds[2];
    ASSERT_EQ(pipe2(Fds, O_CLOEXEC), 0);
    char Dir[] = "/tmp/ompdpu-test-key.XXXXXX";
    ASSERT_NE(mkdtemp(Dir), nullptr);
    KeyDir = Dir;
    KeyFile = KeyDir + "/key";
    ASSERT_TRUE(auth::createKeyFile(KeyFile).ok());
    std::vector<std::string> Args = {
        OMPDPU_SERVER_EXE, "--listen", "127.0.0.1:0", "--ready-fd", "3",
        "--memory",        "64M",      "--key",       KeyFile};
    if (geteuid() == 0) // a private server of root's, as ompdpu run makes
      Args.push_back("--root-sessions");
    Args.insert(Args.end(), Extra.begin(), Extra.end());
    std::vector<char *> Argv;
    for (std::string &A : Args)
      Argv.push_back(A.data());
    Argv.push_back(nullptr);
    Pid = fork();
    if (Pid == 0) {
      dup2(Fds[1], 3);
      execv(OMPDPU_SERVER_EXE, Argv.data());
      _exit(127);
    }
    close(Fds[1]);
    std::string Line;
    char Buf[128];
    pollfd P{Fds[0], POLLIN, 0};
    while (Line.find('\n') == std::string::npos && poll(&P, 1, 10000) > 0) {
      ssize_t N = read(Fds[0], Buf, sizeof(Buf));
      if (N <= 0)
        break;
      Line.append(Buf, N);
    }
    close(Fds[0]);
    auto Ready = protocol::parseReadyLine(Line);
    ASSERT_TRUE(static_cast<bool>(Ready)) << Ready.status().message();
    Addr.Host = Ready->Host;
    Addr.Port = Ready->Port;
  }
  /// Stop it (SIGTERM) unless a test already did.
  void stop() {
    if (Pid > 0) {
      kill(Pid, SIGTERM);
      waitpid(Pid, nullptr, 0);
    }
    Pid = -1;
  }
  ~ServerProcess() {
    stop();
    if (!KeyDir.empty()) {
      unlink(KeyFile.c_str());
      rmdir(KeyDir.c_str());
    }
  }
  /// A client configuration that holds this server's key.
  ClientConfig config() const {
    ClientConfig Cfg;
    Cfg.KeyFile = KeyFile;
    return Cfg;
  }

  pid_t Pid = -1;
  DeviceAddress Addr;
  std::string KeyDir, KeyFile;
};

} // namespace ompdpu::test
