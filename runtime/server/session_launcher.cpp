//===- session_launcher.cpp - Start a client's session process ------------===//
#include "server/session_launcher.h"

#include "common/log.h"
#include "server/output_ring.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ompdpu::server {

using namespace protocol;

Expected<std::vector<uint8_t>> awaitSessionAddress(int ChannelFd) {
  SessionReady Ready;
  if (Status S = receiveChannelMessage(ChannelFd, MsgType::SessionReady, Ready,
                                       /*TimeoutMs=*/10000);
      !S.ok())
    return S.withContext("session did not start");
  return std::move(Ready.Address);
}

namespace {

/// A line on the server's stderr from the forked child (no allocation).
void childFailed(const char *Step) {
  int Err = errno;
  char Num[16];
  int K = sizeof(Num);
  Num[--K] = '\0';
  do
    Num[--K] = static_cast<char>('0' + Err % 10);
  while ((Err /= 10) > 0 && K > 0);
  for (const char *Part :
       {"ompdpu-server: session cannot start: ", Step, " failed, errno ",
        static_cast<const char *>(Num + K), "\n"})
    if (write(2, Part, std::strlen(Part)) < 0)
      break;
}

} // namespace

Expected<LaunchedSession> launchSession(const char *SelfExe, SessionSetup Terms,
                                        const SessionUser &User,
                                        const SessionLimits &Limits) {
  int Fds[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, Fds) != 0)
    return Status::error(format("socketpair: %s", std::strerror(errno)));
  int OutFd = memfd_create("ompdpu-output", MFD_CLOEXEC);
  if (OutFd < 0 || ftruncate(OutFd, sizeof(OutputArea)) != 0) {
    Status S = Status::error(format("output area: %s", std::strerror(errno)));
    if (OutFd >= 0)
      close(OutFd);
    close(Fds[0]);
    close(Fds[1]);
    return S;
  }
  pid_t Pid = fork();
  if (Pid < 0) {
    close(Fds[0]);
    close(Fds[1]);
    close(OutFd);
    return Status::error(format("fork: %s", std::strerror(errno)));
  }
  if (Pid == 0) {
    // Child: a fresh program image; nothing of the parent's UCX survives.
    dup2(Fds[1], 3);
    dup2(OutFd, 4);
    close_range(5, ~0U, 0);
    const char *Args[] = {SelfExe, "--session", "--control-fd", "3", nullptr};
    signal(SIGCHLD, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    if (const char *Failed = enterSessionAccount(User, Limits)) {
      childFailed(Failed);
      _exit(126);
    }
    execv(SelfExe, const_cast<char **>(Args));
    childFailed("exec");
    _exit(127);
  }
  close(Fds[1]);
  LaunchedSession L;
  L.Pid = Pid;
  L.ChannelFd = Fds[0];
  L.OutputFd = OutFd;
  // Its terms travel on the channel, not in its environment or arguments,
  // where other processes of the user could read the token.
  Terms.OutputFd = 4;
  Header H;
  H.Type = MsgType::SessionSetup;
  Status S = sendChannelFrame(L.ChannelFd, frame(H, Terms));
  auto Addr = S.ok() ? awaitSessionAddress(L.ChannelFd)
                     : Expected<std::vector<uint8_t>>(S);
  if (!Addr) {
    kill(Pid, SIGKILL);
    waitpid(Pid, nullptr, 0);
    close(L.ChannelFd);
    close(L.OutputFd);
    return Addr.status();
  }
  L.Address = std::move(*Addr);
  return L;
}

} // namespace ompdpu::server
