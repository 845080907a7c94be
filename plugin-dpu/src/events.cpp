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
/// eight of each for a region with eight small maps.
struct ThreadEvents {
  static constexpr size_t kKept = 256;
  std::vector<Event *> Free;
  ~ThreadEvents() {
    SharedEvents &S = shared();
    std::lock_guard<std::mutex> L(S.M);
    for (Event *E : Free)
      S.Free.emplace_back(E);
  }
};
thread_local ThreadEvents Mine;
} // namespace

Event *acquireEvent() {
  if (!Mine.Free.empty()) {
    Event *E = Mine.Free.back();
    Mine.Free.pop_back();
    return E;
  }
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
  if (Mine.Free.size() < ThreadEvents::kKept) {
    Mine.Free.push_back(E);
    return;
  }
  SharedEvents &S = shared();
  std::lock_guard<std::mutex> L(S.M);
  S.Free.emplace_back(E);
}

} // namespace ompdpu::plugin
