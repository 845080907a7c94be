//===- session_launcher.cpp - Start a client's session process ------------===//
#include "server/session_launcher.h"

#include "common/log.h"
#include "server/output_ring.h"
#include "server/session_leftovers.h"
#include "server/session_log.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ompdpu::server {

using namespace protocol;

void killSessionGroup(pid_t Pid) {
  kill(-Pid, SIGKILL);
  kill(Pid, SIGKILL);
}

Expected<SessionReady> awaitSessionReady(int ChannelFd) {
  SessionReady Ready;
  if (Status S = receiveChannelMessage(ChannelFd, MsgType::SessionReady, Ready,
                                       /*TimeoutMs=*/10000);
      !S.ok())
    return S.withContext("session did not start");
  return Ready;
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

/// awaitSessionReady, but a session that stops or dies while starting
/// fails at once: the supervisor waits for it, and serves no one meanwhile.
static Expected<SessionReady> awaitStartingSession(int ChannelFd, pid_t Pid,
                                                   bool &Reaped) {
  constexpr int kLimitMs = 10000, kSliceMs = 50;
  for (int Waited = 0; Waited < kLimitMs; Waited += kSliceMs) {
    pollfd P{ChannelFd, POLLIN, 0};
    int Ready = poll(&P, 1, kSliceMs);
    if (Ready > 0 || (Ready < 0 && errno != EINTR)) // EINTR: its SIGCHLD?
      return awaitSessionReady(ChannelFd);
    int St = 0;
    if (waitpid(Pid, &St, WNOHANG | WUNTRACED) != Pid)
      continue;
    Reaped = !WIFSTOPPED(St);
    return Status::error(format("session did not start: it %s",
                                WIFSTOPPED(St)    ? "was stopped"
                                : WIFSIGNALED(St) ? "was killed by a signal"
                                                  : "exited"));
  }
  return Status::error(format("session did not start: no %s within %d ms",
                              typeName(MsgType::SessionReady), kLimitMs));
}

/// The environment of a session that changes account: the account's own
/// HOME, USER, LOGNAME and SHELL, a plain PATH, and of the server's only
/// what configures the session (UCX, OpenMP, ompdpu, locale, sanitizers),
/// never, say, root's tokens.
static std::vector<std::string> accountEnvironment(const SessionUser &User) {
  static const char *const Kept[] = {
      "UCX_",        "OMPDPU_", "OMP_",
      "KMP_",        "LIBOMP",  "LANG=",
      "LC_",         "TZ=",     "LD_LIBRARY_PATH=",
      "LD_PRELOAD=", "ASAN_",   "UBSAN_",
      "TSAN_",       "LSAN_"};
  std::vector<std::string> Env;
  for (char **E = environ; *E; ++E)
    for (const char *Prefix : Kept)
      if (!std::strncmp(*E, Prefix, std::strlen(Prefix))) {
        Env.push_back(*E);
        break;
      }
  passwd Pw, *Found = nullptr;
  char Buf[4096];
  bool Known = getpwuid_r(User.Uid, &Pw, Buf, sizeof Buf, &Found) == 0 && Found;
  Env.push_back(std::string("HOME=") + (Known ? Pw.pw_dir : "/"));
  Env.push_back(std::string("SHELL=") + (Known ? Pw.pw_shell : "/bin/sh"));
  Env.push_back("USER=" + User.Name);
  Env.push_back("LOGNAME=" + User.Name);
  Env.push_back("PATH=/usr/local/bin:/usr/bin:/bin");
  return Env;
}

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
  std::vector<std::string> EnvText;
  std::vector<char *> Env;
  if (User.Switch) {
    EnvText = accountEnvironment(User);
    for (std::string &E : EnvText)
      Env.push_back(E.data());
    Env.push_back(nullptr);
  }
  int Log[2] = {-1, -1};
  pid_t Pid = pipe2(Log, O_CLOEXEC) == 0 ? fork() : -1;
  if (Pid < 0) {
    Status S = Status::error(format("fork: %s", std::strerror(errno)));
    for (int Fd : {Fds[0], Fds[1], OutFd, Log[0], Log[1]})
      if (Fd >= 0)
        close(Fd);
    return S;
  }
  if (Pid == 0) {
    // Child: a fresh program image; nothing of the parent's UCX survives.
    // Nothing of the supervisor's terminal or log either: stdin and stdout
    // are /dev/null, stderr a pipe the supervisor reads, and a new session
    // has no controlling terminal (whose input TIOCSTI could fake).
    int Null = open("/dev/null", O_RDWR | O_CLOEXEC);
    dup2(Fds[1], 3);
    dup2(OutFd, 4);
    dup2(Log[1], 2);
    dup2(Null, 0);
    dup2(Null, 1);
    close_range(5, ~0U, 0);
    setsid();
    const char *Args[] = {SelfExe, "--session", "--control-fd", "3", nullptr};
    signal(SIGCHLD, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    // libomp's registration name is predictable: one made in advance by
    // another user would make libomp abort the session (root may remove it).
    removeLibompRegistration(getpid(), User.Uid);
    if (const char *Failed = enterSessionAccount(User, Limits)) {
      childFailed(Failed);
      _exit(126);
    }
    if (User.Switch)
      execve(SelfExe, const_cast<char **>(Args), Env.data());
    else
      execv(SelfExe, const_cast<char **>(Args));
    childFailed("exec");
    _exit(127);
  }
  close(Fds[1]);
  close(Log[1]);
  fcntl(Log[0], F_SETFL, O_NONBLOCK);
  LaunchedSession L;
  L.Pid = Pid;
  L.ChannelFd = Fds[0];
  L.OutputFd = OutFd;
  L.LogFd = Log[0];
  // Its terms travel on the channel, not in its environment or arguments,
  // where other processes of the user could read the token.
  Terms.OutputFd = 4;
  Header H;
  H.Type = MsgType::SessionSetup;
  Status S = sendChannelFrame(L.ChannelFd, frame(H, Terms));
  bool Reaped = false;
  auto Ready = S.ok() ? awaitStartingSession(L.ChannelFd, Pid, Reaped)
                      : Expected<SessionReady>(S);
  if (!Ready) {
    if (!Reaped) { // else its pid may be another process's already
      killSessionGroup(Pid);
      waitpid(Pid, nullptr, 0);
    }
    close(L.ChannelFd);
    close(L.OutputFd);
    SessionLog(L.LogFd, format("session %d", static_cast<int>(Pid))).close();
    return Ready.status();
  }
  L.Address = std::move(Ready->Address);
  L.ShmFiles = std::move(Ready->ShmFiles);
  return L;
}

} // namespace ompdpu::server
