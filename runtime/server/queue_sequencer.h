//===- queue_sequencer.h - A client queue's operations, in order -*- C++
//-*-===//
//
// The operations of one client queue carry sequence numbers and start one
// at a time, in that order, whatever order they arrive in; Landed requests
// wait until an operation's host -> device bytes are in place. Requests and
// waiters are whatever the session keeps (templates): this knows no
// message or transport, and is tested alone.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ompdpu::server {

template <typename Request, typename Waiter> class QueueSequencer {
public:
  enum class Admit {
    Start,    ///< its turn: the caller starts it now (the queue is busy)
    Parked,   ///< kept until its turn (see stepDone)
    Duplicate ///< that number was seen already: refuse it
  };

  /// Operation Seq of Queue arrived. R is moved from only when Parked.
  Admit admit(uint32_t Queue, uint32_t Seq, Request &R) {
    State &Q = state(Queue);
    // Also the number of the operation running now (it was parked for
    // good before: its turn had come).
    if (Seq < Q.NextSeq || (Q.Busy && Seq == Q.NextSeq) || Q.Waiting.count(Seq))
      return Admit::Duplicate;
    if (Q.inTurn(Seq)) {
      Q.Busy = true;
      return Admit::Start;
    }
    Q.Waiting.emplace(Seq, std::move(R));
    return Admit::Parked;
  }
  /// Operation Seq of Queue could start now with nothing parked before it
  /// (the fast path: carried out straight from the message callback).
  bool inTurnAlone(uint32_t Queue, uint32_t Seq) {
    const State &Q = state(Queue);
    return Q.inTurn(Seq) && Q.Waiting.empty();
  }
  /// The operation at Queue's head finished. Returns the Landed waiters
  /// that may now be answered (in Ready) and the next operation, when it
  /// arrived already (the queue is then busy with it).
  std::optional<Request> stepDone(uint32_t Queue, std::vector<Waiter> &Ready) {
    State &Q = state(Queue);
    Q.Busy = false;
    ++Q.NextSeq;
    if (!Q.LandWaiters.empty())
      landed(Queue, Q.NextSeq, Ready);
    auto It = Q.Waiting.find(Q.NextSeq);
    if (It == Q.Waiting.end())
      return std::nullopt;
    std::optional<Request> Next(std::move(It->second));
    Q.Waiting.erase(It);
    Q.Busy = true;
    return Next;
  }
  /// Operations of Queue numbered below Through have their bytes in place
  /// (a Batch's, before its kernel runs): the waiters now due go to Ready.
  void landed(uint32_t Queue, uint32_t Through, std::vector<Waiter> &Ready) {
    State &Q = state(Queue);
    if (Through > Q.Landed)
      Q.Landed = Through;
    auto &Ws = Q.LandWaiters;
    for (size_t K = 0; K < Ws.size();) {
      if (Ws[K].first < Q.Landed) {
        Ready.push_back(std::move(Ws[K].second));
        Ws[K] = std::move(Ws.back());
        Ws.pop_back();
      } else {
        ++K;
      }
    }
  }
  /// W waits until operation Seq of Queue has its bytes in place; false
  /// when it has already (answer W now).
  bool waitLanded(uint32_t Queue, uint32_t Seq, Waiter W) {
    State &Q = state(Queue);
    if (Seq < Q.Landed || Seq < Q.NextSeq)
      return false;
    Q.LandWaiters.emplace_back(Seq, std::move(W));
    return true;
  }

private:
  struct State {
    uint32_t NextSeq = 0;
    bool Busy = false;
    std::map<uint32_t, Request> Waiting;
    uint32_t Landed = 0;
    std::vector<std::pair<uint32_t, Waiter>> LandWaiters;
    bool inTurn(uint32_t Seq) const { return !Busy && Seq == NextSeq; }
  };
  std::unordered_map<uint32_t, State> Queues;
  /// The queue looked up last: a client thread issues region after region
  /// through one queue, and this spares the table's hash on the way to the
  /// reply. Elements of an unordered_map never move.
  uint32_t LastId = 0;
  State *Last = nullptr;
  State &state(uint32_t Id) {
    if (Id != LastId || !Last) {
      Last = &Queues[Id];
      LastId = Id;
    }
    return *Last;
  }
};

} // namespace ompdpu::server
