//===- reply_sender_test.cpp - How a session answers, without UCX ---------===//
#include "server/reply_sender.h"

#include "transport/memory_worker.h"

#include <gtest/gtest.h>

using namespace ompdpu;
using namespace ompdpu::protocol;
using namespace ompdpu::server;

namespace {

TEST(ReplySender, RepliesCarryTheirRequestsNumbersAndData) {
  transport::MemoryNetwork Net;
  auto Client = Net.create(), Server = Net.create();
  std::vector<std::pair<Header, Reply>> Got;
  std::vector<size_t> DataLen;
  Client->setHandler([&](const uint8_t *C, size_t L,
                         const transport::BulkData &D, transport::Peer) {
    Header H;
    Reader Body;
    EXPECT_TRUE(parseFrame(C, L, H, Body).ok());
    Reply R;
    EXPECT_TRUE(decodeBody(Body, R).ok());
    Got.emplace_back(H, R);
    DataLen.push_back(D.Length);
    return false;
  });
  transport::Peer ToClient = *Server->connectToWorker(Client->address(), true);
  ReplySender Replies(*Server, /*Capture=*/nullptr);
  Header Req;
  Req.Type = MsgType::Retrieve;
  Req.RequestId = 77;
  Req.Queue = 3;
  Req.Seq = 9;
  Reply Rep;
  Rep.Value = 5;
  int After = 0;
  EXPECT_TRUE(
      Replies.reply(Req, ToClient, Rep, "hello", 5, nullptr, [&] { ++After; }));
  // A large reply leaves later; the caller learns when.
  std::vector<uint8_t> Big(100000, 1);
  EXPECT_FALSE(Replies.reply(Req, ToClient, Rep, Big.data(), Big.size(),
                             nullptr, [&] { ++After; }));
  EXPECT_EQ(After, 0);
  Replies.progress();
  EXPECT_EQ(After, 1);
  // Nobody to answer: done at once, nothing sent.
  EXPECT_TRUE(Replies.reply(Req, nullptr, Rep, nullptr, 0, nullptr, [] {}));
  Client->progress();
  ASSERT_EQ(Got.size(), 2u);
  for (auto &[H, R] : Got) {
    EXPECT_EQ(H.Type, MsgType::Reply);
    EXPECT_EQ(H.RequestId, 77u);
    EXPECT_EQ(H.Queue, 3);
    EXPECT_EQ(H.Seq, 9u);
    EXPECT_EQ(R.Value, 5u);
  }
  EXPECT_EQ(DataLen[0], 5u);
  EXPECT_EQ(DataLen[1], Big.size());
}

} // namespace
