//===- memory_worker_test.cpp - The in-memory transport -------------------===//
#include "transport/memory_worker.h"

#include <gtest/gtest.h>
#include <string>

using namespace ompdpu;
using namespace ompdpu::transport;

namespace {

struct Received {
  std::string Ctrl;
  BulkData Data;
  Peer From = nullptr;
};

TEST(MemoryWorker, MessagesArriveOnProgressWithTheirSender) {
  MemoryNetwork Net;
  auto A = Net.create(), B = Net.create();
  std::vector<Received> AtB, AtA;
  B->setHandler([&](const uint8_t *C, size_t L, const BulkData &D, Peer F) {
    AtB.push_back({std::string(C, C + L), D, F});
    return false;
  });
  A->setHandler([&](const uint8_t *C, size_t L, const BulkData &D, Peer F) {
    AtA.push_back({std::string(C, C + L), D, F});
    return false;
  });
  auto P = A->connectToWorker(B->address(), true);
  ASSERT_TRUE(static_cast<bool>(P));
  ASSERT_TRUE(A->trySend(*P, "ping", 4, nullptr, 0, true));
  EXPECT_TRUE(AtB.empty()); // nothing arrives before progress
  B->progress();
  ASSERT_EQ(AtB.size(), 1u);
  EXPECT_EQ(AtB[0].Ctrl, "ping");
  ASSERT_NE(AtB[0].From, nullptr);
  ASSERT_TRUE(B->trySend(AtB[0].From, "pong", 4, nullptr, 0, false));
  A->progress();
  ASSERT_EQ(AtA.size(), 1u);
  EXPECT_EQ(AtA[0].Ctrl, "pong");
  EXPECT_EQ(AtA[0].From, nullptr); // no answer wanted
}

TEST(MemoryWorker, LargeDataIsRendezvousAndLandsInPlace) {
  MemoryNetwork Net;
  auto A = Net.create(), B = Net.create();
  BulkData Kept;
  B->setHandler([&](const uint8_t *, size_t, const BulkData &D, Peer) {
    Kept = D;
    return true;
  });
  auto P = A->connectToWorker(B->address(), true);
  std::vector<uint8_t> Big(20000, 7);
  EXPECT_FALSE(A->trySend(*P, "s", 1, Big.data(), Big.size(), true));
  bool Sent = false;
  A->send(
      *P, {'s'}, Big.data(), Big.size(),
      [&](const Status &S) { Sent = S.ok(); }, true);
  A->progress();
  EXPECT_TRUE(Sent);
  B->progress();
  ASSERT_TRUE(Kept.Rendezvous);
  EXPECT_EQ(B->heldBulk(), 1u);
  std::vector<uint8_t> Dst(Kept.Length);
  bool Landed = false;
  B->receive(Kept, Dst.data(), [&](const Status &S) { Landed = S.ok(); });
  B->progress();
  EXPECT_TRUE(Landed);
  EXPECT_EQ(Dst, Big);
  EXPECT_EQ(B->heldBulk(), 0u);
}

TEST(MemoryWorker, ListenConnectAcceptAndLoss) {
  MemoryNetwork Net;
  auto Server = Net.create(), Client = Net.create();
  Peer Accepted = nullptr;
  auto Port = Server->listen({"127.0.0.1", 0}, [&](Peer P) { Accepted = P; });
  ASSERT_TRUE(static_cast<bool>(Port));
  EXPECT_FALSE(static_cast<bool>(Client->connect({"127.0.0.1", 1})));
  auto P = Client->connect({"127.0.0.1", *Port});
  ASSERT_TRUE(static_cast<bool>(P));
  Server->progress();
  ASSERT_NE(Accepted, nullptr);
  std::vector<Peer> Lost;
  Server->setPeerErrorHandler(
      [&](Peer E, const Status &) { Lost.push_back(E); });
  Client.reset(); // the client dies
  Server->progress();
  ASSERT_EQ(Lost.size(), 1u);
  EXPECT_EQ(Lost[0], Accepted);
  Status Failed;
  Server->send(
      Accepted, {'x'}, nullptr, 0, [&](const Status &S) { Failed = S; }, true);
  Server->progress();
  EXPECT_FALSE(Failed.ok());
}

} // namespace
