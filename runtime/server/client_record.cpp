//===- client_record.cpp - A supervisor's client and its session ----------===//
#include "server/client_record.h"

#include "common/log.h"
#include "protocol/session_channel.h"
#include "server/output_leftovers.h"

#include <cstring>
#include <sys/wait.h>
#include <unistd.h>

namespace ompdpu::server {

using namespace protocol;

namespace {

/// Raw output a dying session may forward per stream (it ran other
/// people's code): a pipe's default capacity.
constexpr size_t kMaxRawLeft = 64 * 1024;

std::string signalDescription(int Sig) {
  const char *Abbrev = sigabbrev_np(Sig);
  const char *Desc = sigdescr_np(Sig);
  return format("SIG%s (%s)", Abbrev ? Abbrev : "?", Desc ? Desc : "?");
}

} // namespace

void ClientRec::readControl() {
  if (CtlFd < 0)
    return;
  bool Closed = false;
  for (const ChannelFrame &F : drainChannel(CtlFd, Closed)) {
    SessionCrash Crash;
    SessionRawOutput Raw;
    if (F.Type == MsgType::SessionCrash && decodeChannelFrame(F, Crash)) {
      CrashKernel = Crash.Kernel;
    } else if (F.Type == MsgType::SessionRawOutput &&
               decodeChannelFrame(F, Raw)) {
      std::string &Left = RawLeft[Raw.Stream - 1];
      if (Left.size() < kMaxRawLeft)
        Left += Raw.Bytes;
      else
        log(LogLevel::Warning,
            "client %u: raw output of its dying session beyond %zu bytes "
            "dropped",
            Id, kMaxRawLeft);
    } else if (!WarnedUnexpected) {
      WarnedUnexpected = true; // a kernel can write to the channel
      log(LogLevel::Warning,
          "client %u: unexpected %s from its session (further ones are "
          "ignored silently)",
          Id, typeName(F.Type));
    }
  }
}

SessionExit ClientRec::exitReport(int WStatus) const {
  SessionExit X;
  if (StoppedBy) {
    X.Signal = StoppedBy;
    X.Message = "session process stopped by " + signalDescription(X.Signal) +
                ", and ended: a stopped session cannot serve its client";
  } else if (WIFSIGNALED(WStatus)) {
    X.Signal = WTERMSIG(WStatus);
    X.Message = "session process died: " + signalDescription(X.Signal);
    if (!CrashKernel.empty())
      X.Message += " while running the target region in " + CrashKernel;
  } else {
    X.ExitCode = WEXITSTATUS(WStatus);
    X.Message = format("session process exited with status %d", X.ExitCode);
  }
  return X;
}

std::vector<std::vector<uint8_t>> ClientRec::unsentOutput() const {
  return leftoverOutputFrames(OutputFd, RawLeft);
}

void ClientRec::closeOutputArea() {
  if (OutputFd >= 0)
    close(OutputFd);
  OutputFd = -1;
}

} // namespace ompdpu::server
