//===- client_record.h - A supervisor's client and its session --*- C++ -*-===//
#pragma once

#include "protocol/messages.h"
#include "server/session_log.h"
#include "transport/transport.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <sys/types.h>
#include <thread>
#include <vector>

namespace ompdpu::server {

/// One connected client and its session process.
struct ClientRec {
  unsigned Id = 0;
  transport::Peer Ep = nullptr;
  pid_t Pid = -1;
  int CtlFd = -1;
  std::string CrashKernel; ///< the kernel a SessionCrash named
  int StoppedBy = 0;       ///< the signal that stopped it (then killed)
  int OutputFd = -1;       ///< the session's output area (output_ring.h)
  std::string RawLeft[2];  ///< raw writes its crash handler forwarded
  bool Gone = false;
  // MPI mode: the session runs on a thread of this process.
  std::unique_ptr<std::thread> Thread;
  std::unique_ptr<std::atomic<bool>> StopFlag;
  std::unique_ptr<std::atomic<bool>> Finished;
  uid_t Uid = 0;  ///< the account its session runs as
  SessionLog Log; ///< its session's stderr
  bool WarnedUnexpected = false;

  /// Take what the session sent on its channel: the kernel it crashed in,
  /// the raw output of its crash handler (bounded).
  void readControl();
  /// What to tell the client of its session's end (waitpid's WStatus).
  protocol::SessionExit exitReport(int WStatus) const;
  /// Frames of what the session's kernels printed and it did not send.
  std::vector<std::vector<uint8_t>> unsentOutput() const;
  void closeOutputArea();
};

} // namespace ompdpu::server
