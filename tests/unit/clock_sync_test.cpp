#include "client/clock_sync.h"

#include <gtest/gtest.h>

using namespace ompdpu::client;

// A session clock 5 ms ahead of ours that gains 1 us per ms.
static int64_t sessionAt(int64_t OursNs) {
  return OursNs + 5000000 + OursNs / 1000;
}

static ClockSample sample(int64_t Sent, int64_t Trip, int64_t AnsweredAfter) {
  return {Sent, Sent + Trip, sessionAt(Sent + AnsweredAfter)};
}

TEST(ClockSync, KeepsTheShortestRoundTrip) {
  ClockSample Best;
  keepBest(Best, sample(1000000, 9000, 8000)); // answered late in its trip
  keepBest(Best, sample(2000000, 2000, 1000));
  keepBest(Best, sample(3000000, 4000, 2000));
  EXPECT_EQ(Best.roundTrip(), 2000);
  keepBest(Best, ClockSample()); // an invalid one changes nothing
  EXPECT_EQ(Best.roundTrip(), 2000);
}

TEST(ClockSync, MapsOffsetAndDriftWithinTheStatedUncertainty) {
  ClockSample First = sample(1000000, 2000, 1000);
  ClockSample Last = sample(901000000, 3000, 1500);
  ClockMap Map(First, Last);
  ASSERT_TRUE(Map.valid());
  for (int64_t Ours : {1000000ll, 450000000ll, 901000000ll})
    EXPECT_NEAR(double(Map.toClient(sessionAt(Ours))), double(Ours),
                double(Map.uncertaintyNs()));
  // One sample takes out the offset but not the drift: 900 ms on, the
  // session's clock has gained 900 us.
  ClockMap Fixed(First, ClockSample());
  EXPECT_NEAR(double(Fixed.toClient(sessionAt(1000000))), 1000000.0,
              double(Fixed.uncertaintyNs()));
  EXPECT_NEAR(double(Fixed.toClient(sessionAt(901000000))),
              901000000.0 + 900000, double(Fixed.uncertaintyNs()));
}
