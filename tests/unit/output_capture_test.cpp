//===- output_capture_test.cpp - Raw writes reach the ring in time --------===//
//
// The capture takes over this process's fds 1 and 2, so each case runs in a
// child process and reports through its exit code.
//
//===----------------------------------------------------------------------===//
#include "server/output_capture.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <sys/mman.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace ompdpu::server;

namespace {

/// Run Body in a child process; its return value is the child's exit code.
int inChild(int (*Body)()) {
  pid_t Pid = fork();
  if (Pid == 0)
    _exit(Body());
  int Status = 0;
  waitpid(Pid, &Status, 0);
  return WIFEXITED(Status) ? WEXITSTATUS(Status) : 100 + WTERMSIG(Status);
}

/// A kernel's raw write(1, ...) that the pump thread has already taken from
/// the pipe, but not yet put in the ring (here: the ring is full), is in
/// the ring when afterKernel() returns: the kernel's reply must not pass it.
int rawWriteTakenByThePump() {
  int Fd = memfd_create("output-area", MFD_CLOEXEC);
  if (Fd < 0 || ftruncate(Fd, sizeof(OutputArea)) != 0)
    return 1;
  auto *Area = static_cast<OutputArea *>(mmap(
      nullptr, sizeof(OutputArea), PROT_READ | PROT_WRITE, MAP_SHARED, Fd, 0));
  OutputCapture *C = Area == MAP_FAILED ? nullptr : OutputCapture::install(Fd);
  if (!C)
    return 2;
  std::vector<char> Fill(kOutputRingBytes, 'x');
  C->write(1, Fill.data(), Fill.size());
  std::atomic<bool> PumpWaits{false};
  C->setWake([&] { PumpWaits = true; });
  if (::write(1, "raw\n", 4) != 4)
    return 3;
  auto Deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!PumpWaits && std::chrono::steady_clock::now() < Deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (!PumpWaits)
    return 4; // the pump never read the pipe
  OutputRing &R = Area->Streams[0];
  std::thread Loop([&] {
    // The loop sends some of the ring, after a while.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    R.Head.store(4, std::memory_order_release);
  });
  C->afterKernel();
  uint64_t Tail = R.Tail.load(std::memory_order_acquire);
  Loop.join();
  return Tail == kOutputRingBytes + 4 ? 0 : 5;
}

TEST(OutputCapture, RawWriteInTheRingBeforeTheKernelsReply) {
  EXPECT_EQ(inChild(rawWriteTakenByThePump), 0)
      << "1-2: no capture; 3: write failed; 4: the pump did not read; "
         "5: afterKernel() returned before the raw write was in the ring";
}

} // namespace
