//===- output_cursor_test.cpp - Each byte of a session's output once ------===//
#include "client/output_cursor.h"
#include "server/output_ring.h"

#include <gtest/gtest.h>
#include <memory>

using ompdpu::client::OutputCursor;
using ompdpu::protocol::Output;

TEST(OutputCursor, WritesEachByteOnce) {
  OutputCursor C;
  EXPECT_EQ(C.seen(0, 10), 0u);
  EXPECT_EQ(C.seen(10, 5), 0u);
  EXPECT_EQ(C.seen(0, 10), 10u) << "the supervisor resends what arrived";
  EXPECT_EQ(C.seen(12, 6), 3u) << "a piece partly written: its new end";
  EXPECT_EQ(C.seen(Output::kNotInStream, 7), 0u) << "a note: always";
  EXPECT_EQ(C.seen(18, 2), 0u) << "notes move nothing";
  EXPECT_EQ(C.seen(30, 5), 0u) << "bytes lost before: the rest still goes";
  EXPECT_EQ(C.seen(20, 10), 10u);
}

TEST(OutputRing, UnsentBytesSayWhereTheyStart) {
  auto R = std::make_unique<ompdpu::server::OutputRing>();
  const char Text[] = "hello world";
  for (int K = 0; K < 11; ++K)
    R->Data[K] = Text[K];
  R->Head = 6;
  R->Tail = 11;
  auto U = ompdpu::server::unsentOutput(*R);
  EXPECT_EQ(U.From, 6u);
  EXPECT_EQ(U.Bytes, "world");
  R->Head = 12; // inconsistent: nothing is trusted
  EXPECT_TRUE(ompdpu::server::unsentOutput(*R).Bytes.empty());
}
