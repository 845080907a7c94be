//===- events.cpp - Events: recorded points in a queue --------------------===//
#include "events.h"

namespace ompdpu::plugin {

bool Event::pending() const {
  if (!Point)
    return false;
  std::lock_guard<std::mutex> L(Point->M);
  return !Point->Sent;
}

namespace {
/// Events freed by any thread and not kept by it. Never destroyed: a thread
/// that ends during the process's exit still gives its events back here.
struct SharedEvents {
  std::mutex M;
  std::vector<std::unique_ptr<Event>> Free;
};
SharedEvents &shared() {
  static auto *S = new SharedEvents;
  return *S;
}

/// Events this thread freed, for its next creates without a lock:
/// libomptarget creates one per new mapping and destroys it at unmapping,
/// eight of each for a region with eight small maps. Plain thread-locals:
/// they stay usable after the thread's destructors ran, as exit() runs the
/// main thread's before atexit handlers, which may offload.
constexpr size_t kKept = 256;
thread_local Event *MineFree[kKept];
thread_local size_t MineCount = 0;
thread_local bool MineClosed = false; ///< its events went to shared()

/// Gives a thread's events to shared() when the thread ends.
struct ThreadEventsCloser {
  ~ThreadEventsCloser() {
    SharedEvents &S = shared();
    std::lock_guard<std::mutex> L(S.M);
    for (size_t K = 0; K < MineCount; ++K)
      S.Free.emplace_back(MineFree[K]);
    MineCount = 0;
    MineClosed = true;
  }
};
thread_local ThreadEventsCloser Closer;
} // namespace

Event *acquireEvent() {
  if (MineCount)
    return MineFree[--MineCount];
  {
    SharedEvents &S = shared();
    std::lock_guard<std::mutex> L(S.M);
    if (!S.Free.empty()) {
      Event *E = S.Free.back().release();
      S.Free.pop_back();
      return E;
    }
  }
  return new Event();
}

void releaseEvent(Event *E) {
  // Nobody waits for an event libomptarget destroys.
  E->Before.reset();
  E->Point.reset();
  E->QueueId = 0;
  if (!MineClosed && MineCount < kKept) {
    (void)&Closer; // registers its destructor with the first event kept
    MineFree[MineCount++] = E;
    return;
  }
  SharedEvents &S = shared();
  std::lock_guard<std::mutex> L(S.M);
  S.Free.emplace_back(E);
}

} // namespace ompdpu::plugin
