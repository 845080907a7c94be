//===-- fifo.h - A first-in first-out queue that keeps its storage -*- C++ -*-//
//
// The session queues every request and every ready kernel for a moment. A
// std::deque of elements this large allocates a node for every two or three
// of them, a malloc and a free on each request's critical path; this queue
// reuses one vector's storage, so in steady state it allocates nothing.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace ompdpu {

template <typename T> class Fifo {
public:
  bool empty() const { return Head == Items.size(); }
  size_t size() const { return Items.size() - Head; }
  void push(T &&V) { Items.push_back(std::move(V)); }
  T &front() { return Items[Head]; }
  /// Elements held in storage, consumed ones included (for tests).
  size_t storedElements() const { return Items.size(); }
  /// Remove and return the oldest element.
  T pop() {
    T V = std::move(Items[Head++]);
    if (Head == Items.size()) {
      Items.clear(); // keeps the capacity
      Head = 0;
    } else if (Head >= kCompactAfter && 2 * Head >= Items.size()) {
      // Never fully drained: drop the consumed prefix so it cannot grow
      // without bound.
      Items.erase(Items.begin(), Items.begin() + Head);
      Head = 0;
    }
    return V;
  }

private:
  static constexpr size_t kCompactAfter = 64;
  std::vector<T> Items;
  size_t Head = 0;
};

} // namespace ompdpu
