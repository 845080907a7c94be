//===- output_capture.cpp - Kernels' stdout and stderr, for the client ----===//
#include "server/output_capture.h"

#include "common/log.h"
#include "protocol/session_channel.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ext/stdio_sync_filebuf.h>
#include <fcntl.h>
#include <iostream>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

namespace ompdpu::server {

OutputCapture *OutputCapture::Active = nullptr;
std::atomic<bool> OutputCapture::Busy{false};
std::atomic<int> OutputCapture::Pumping{0};
thread_local bool OutputCapture::OnLoop = false;

namespace {
struct CookieStream {
  OutputCapture *Capture;
  int Stream;
};

ssize_t cookieWrite(void *C, const char *Buf, size_t Len) {
  auto *S = static_cast<CookieStream *>(C);
  S->Capture->write(S->Stream, Buf, Len);
  return static_cast<ssize_t>(Len);
}

/// An unbuffered stdio stream into the capture: a kernel's printf is in the
/// ring when the call returns.
FILE *openCaptureStream(OutputCapture *C, int Stream) {
  cookie_io_functions_t Fns{};
  Fns.write = cookieWrite;
  FILE *F = fopencookie(new CookieStream{C, Stream}, "w", Fns);
  if (F)
    setvbuf(F, nullptr, _IONBF, 0);
  return F;
}

/// fd Fd becomes the write end of a new pipe; returns its (non-blocking)
/// read end.
int redirectToPipe(int Fd) {
  int P[2];
  if (pipe2(P, O_CLOEXEC) != 0)
    return -1;
  fcntl(P[0], F_SETFL, fcntl(P[0], F_GETFL) | O_NONBLOCK);
  if (dup2(P[1], Fd) < 0) {
    close(P[0]);
    close(P[1]);
    return -1;
  }
  close(P[1]);
  return P[0];
}
} // namespace

OutputCapture *OutputCapture::install(int AreaFd) {
  void *Map = mmap(nullptr, sizeof(OutputArea), PROT_READ | PROT_WRITE,
                   MAP_SHARED, AreaFd, 0);
  close(AreaFd);
  if (Map == MAP_FAILED) {
    log(LogLevel::Error, "session: cannot map the output area: %s",
        std::strerror(errno));
    return nullptr;
  }
  auto *C = new OutputCapture();
  C->Area = static_cast<OutputArea *>(Map);
  // The session's own messages still go to the server's log.
  int LogFd = fcntl(2, F_DUPFD_CLOEXEC, 3);
  if (FILE *Log = LogFd >= 0 ? fdopen(LogFd, "w") : nullptr) {
    setvbuf(Log, nullptr, _IONBF, 0);
    setLogStream(Log);
  }
  std::fflush(stdout);
  std::fflush(stderr);
  FILE *Out = openCaptureStream(C, 1), *Err = openCaptureStream(C, 2);
  if (!Out || !Err) {
    log(LogLevel::Error, "session: cannot open capture streams");
    return nullptr;
  }
  stdout = Out;
  stderr = Err;
  // iostreams keep the FILE they were made with: give them ours.
  static __gnu_cxx::stdio_sync_filebuf<char> CoutBuf(Out), CerrBuf(Err),
      ClogBuf(Err);
  std::cout.rdbuf(&CoutBuf);
  std::cerr.rdbuf(&CerrBuf);
  std::clog.rdbuf(&ClogBuf);
  C->PipeFds[0] = redirectToPipe(1);
  C->PipeFds[1] = redirectToPipe(2);
  if (C->PipeFds[0] >= 0 && C->PipeFds[1] >= 0)
    C->Pump = std::thread([C] { C->pumpFds(); });
  else
    log(LogLevel::Warning,
        "session: raw writes to fds 1 and 2 are not "
        "captured: %s",
        std::strerror(errno));
  Active = C;
  return C;
}

void OutputCapture::write(int S, const char *Data, size_t Len) {
  OutputRing &R = Area->Streams[S - 1];
  std::lock_guard<std::mutex> L(M[S - 1]);
  uint64_t Tail = R.Tail.load(std::memory_order_relaxed);
  // A full ring that nobody empties for this long (no thread leads the
  // session's loop) loses bytes rather than hanging the kernel.
  constexpr auto kStuck = std::chrono::seconds(10);
  auto WaitingSince = std::chrono::steady_clock::now();
  uint64_t LastHead = R.Head.load(std::memory_order_acquire);
  while (Len) {
    uint64_t Head = R.Head.load(std::memory_order_acquire);
    uint64_t Free = kOutputRingBytes - (Tail - Head);
    if (!Free) {
      auto Now = std::chrono::steady_clock::now();
      if (Head != LastHead) {
        LastHead = Head;
        WaitingSince = Now;
      }
      if (OnLoop || Stopping.load() || Now - WaitingSince > kStuck) {
        // OnLoop: the loop that would empty the ring is this thread (a
        // short kernel run inline): keep the loop going, count the loss.
        Dropped[S - 1].fetch_add(Len);
        Pending.store(true, std::memory_order_relaxed);
        break;
      }
      if (Wake)
        Wake();
      std::unique_lock<std::mutex> SL(SpaceM);
      SpaceCV.wait_for(SL, std::chrono::milliseconds(20));
      continue;
    }
    size_t N = std::min<uint64_t>(
        {Len, Free, kOutputRingBytes - Tail % kOutputRingBytes});
    std::memcpy(R.Data + Tail % kOutputRingBytes, Data, N);
    Tail += N;
    R.Tail.store(Tail, std::memory_order_release);
    Data += N;
    Len -= N;
    Pending.store(true, std::memory_order_relaxed);
    if (Wake)
      Wake();
  }
}

uint64_t OutputCapture::takeDropped(int S) {
  return Dropped[S - 1].exchange(0);
}

void OutputCapture::sent(int S, size_t Len) {
  OutputRing &R = Area->Streams[S - 1];
  R.Head.store(R.Head.load(std::memory_order_relaxed) + Len,
               std::memory_order_release);
  InFlight -= Len;
  std::lock_guard<std::mutex> L(SpaceM);
  SpaceCV.notify_all();
}

void OutputCapture::waitForHandOver() {
  // Also for bytes a thread has taken from a pipe and not yet put in a ring.
  for (int K = 0; K < 50 && (Busy.load(std::memory_order_acquire) ||
                             Pumping.load(std::memory_order_acquire));
       ++K) {
    timespec T{0, 1000000};
    nanosleep(&T, nullptr);
  }
}

void OutputCapture::readPipe(int S) {
  std::lock_guard<std::mutex> L(PipeM[S]);
  char Buf[16384];
  for (;;) {
    Pumping.fetch_add(1, std::memory_order_seq_cst);
    ssize_t N = read(PipeFds[S], Buf, sizeof(Buf));
    if (N > 0) {
      RawSeen.store(true, std::memory_order_relaxed);
      write(S + 1, Buf, static_cast<size_t>(N));
    }
    Pumping.fetch_sub(1, std::memory_order_release);
    if (N <= 0)
      return;
    if (static_cast<size_t>(N) < sizeof(Buf))
      return;
  }
}

void OutputCapture::afterKernel() {
  // One poll (a system call) per kernel only where it is small against the
  // kernel: long kernels, or once this session has seen raw output.
  if (PipeFds[0] < 0 || (OnLoop && !RawSeen.load(std::memory_order_relaxed)))
    return;
  pollfd P[2] = {{PipeFds[0], POLLIN, 0}, {PipeFds[1], POLLIN, 0}};
  bool Ready = poll(P, 2, 0) > 0;
  for (int S = 0; S < 2; ++S) {
    if (Ready && (P[S].revents & POLLIN)) {
      readPipe(S);
      continue;
    }
    // An empty pipe may mean the pump thread has just read the kernel's
    // bytes: they must reach the ring before the kernel's reply leaves.
    std::lock_guard<std::mutex> L(PipeM[S]);
  }
}

void OutputCapture::pumpFds() {
  pollfd P[2] = {{PipeFds[0], POLLIN, 0}, {PipeFds[1], POLLIN, 0}};
  while (!Stopping.load()) {
    if (poll(P, 2, 100) <= 0)
      continue;
    for (int S = 0; S < 2; ++S)
      if (P[S].revents & (POLLIN | POLLHUP))
        readPipe(S);
  }
}

void OutputCapture::forwardUnpumped(int ChannelFd) {
  OutputCapture *C = Active;
  if (!C || ChannelFd < 0)
    return;
  static uint8_t Frame[protocol::kMaxChannelFrame];
  static char Buf[protocol::kMaxRawOutputBytes];
  for (int S = 0; S < 2; ++S) {
    // A pipe holds 64 KiB unless a kernel enlarged it.
    for (int Piece = 0; C->PipeFds[S] >= 0 && Piece < 64; ++Piece) {
      ssize_t N = read(C->PipeFds[S], Buf, sizeof Buf); // non-blocking
      if (N <= 0)
        break;
      size_t Len = protocol::encodeRawOutputFrame(
          Frame, static_cast<uint8_t>(S + 1), Buf, static_cast<uint32_t>(N));
      ssize_t Ignored =
          send(ChannelFd, Frame, Len, MSG_NOSIGNAL | MSG_DONTWAIT);
      (void)Ignored;
    }
  }
}

void OutputCapture::stop() {
  Stopping.store(true);
  {
    std::lock_guard<std::mutex> L(SpaceM);
    SpaceCV.notify_all();
  }
  if (Pump.joinable())
    Pump.detach(); // blocked in poll at most 100 ms; the process ends
}

} // namespace ompdpu::server
