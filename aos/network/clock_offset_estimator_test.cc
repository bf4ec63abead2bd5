#include "aos/network/clock_offset_estimator.h"

#include "gtest/gtest.h"

namespace aos::message_bridge {
namespace {

using std::chrono::seconds;
constexpr int64_t kMs = 1000000;

// One exchange with the peer's clock `offset` ahead, `out` ns on the way
// there, `back` on the way back, the peer replying `hold` after receiving.
struct Exchange {
  int64_t t0, t1, t2, t3;
};
Exchange Make(int64_t start, int64_t offset, int64_t out, int64_t back,
              int64_t hold = 0) {
  Exchange e;
  e.t0 = start;
  e.t1 = start + out + offset;
  e.t2 = e.t1 + hold;
  e.t3 = start + out + hold + back;
  return e;
}

TEST(ClockOffsetEstimatorTest, SymmetricDelaysGiveTheExactOffset) {
  ClockOffsetEstimator estimator(seconds(10));
  EXPECT_FALSE(estimator.estimate().valid);
  const Exchange e = Make(1000 * kMs, 7 * kMs, 2 * kMs, 2 * kMs, 5 * kMs);
  ASSERT_TRUE(estimator.Add(e.t0, e.t1, e.t2, e.t3));
  EXPECT_TRUE(estimator.estimate().valid);
  EXPECT_EQ(estimator.estimate().offset_ns, 7 * kMs);
  EXPECT_EQ(estimator.estimate().uncertainty_ns, 2 * kMs);
}

TEST(ClockOffsetEstimatorTest, AsymmetryStaysWithinTheUncertainty) {
  ClockOffsetEstimator estimator(seconds(10));
  const Exchange e = Make(0, -3 * kMs, 4 * kMs, 0);
  ASSERT_TRUE(estimator.Add(e.t0, e.t1, e.t2, e.t3));
  const auto estimate = estimator.estimate();
  EXPECT_EQ(estimate.offset_ns, -1 * kMs);
  EXPECT_EQ(estimate.uncertainty_ns, 2 * kMs);
  EXPECT_LE(std::abs(estimate.offset_ns - (-3 * kMs)), estimate.uncertainty_ns);
}

TEST(ClockOffsetEstimatorTest, ShortestRoundTripInTheWindowWins) {
  ClockOffsetEstimator estimator(seconds(10));
  // A queued exchange (long round trip, skewed) then a quick one.
  Exchange slow = Make(0, 5 * kMs, 30 * kMs, 1 * kMs);
  Exchange quick = Make(100 * kMs, 5 * kMs, 1 * kMs, 1 * kMs);
  ASSERT_TRUE(estimator.Add(slow.t0, slow.t1, slow.t2, slow.t3));
  EXPECT_NE(estimator.estimate().offset_ns, 5 * kMs);
  ASSERT_TRUE(estimator.Add(quick.t0, quick.t1, quick.t2, quick.t3));
  EXPECT_EQ(estimator.estimate().offset_ns, 5 * kMs);
  EXPECT_EQ(estimator.estimate().uncertainty_ns, 1 * kMs);
  // A later slow one does not displace the quick one...
  slow = Make(5000 * kMs, 5 * kMs, 30 * kMs, 1 * kMs);
  ASSERT_TRUE(estimator.Add(slow.t0, slow.t1, slow.t2, slow.t3));
  EXPECT_EQ(estimator.estimate().uncertainty_ns, 1 * kMs);
  // ...until the quick one is older than the window.
  slow = Make(10200 * kMs, 5 * kMs, 30 * kMs, 1 * kMs);
  ASSERT_TRUE(estimator.Add(slow.t0, slow.t1, slow.t2, slow.t3));
  EXPECT_EQ(estimator.estimate().uncertainty_ns, 31 * kMs / 2);
}

TEST(ClockOffsetEstimatorTest, ImpossibleExchangesAreRefused) {
  ClockOffsetEstimator estimator(seconds(10));
  EXPECT_FALSE(estimator.Add(10, 0, 0, 5));    // received before sent
  EXPECT_FALSE(estimator.Add(0, 10, 5, 20));   // peer replied before receiving
  EXPECT_FALSE(estimator.Add(0, 0, 100, 20));  // negative round trip
  EXPECT_FALSE(estimator.Add(0, INT64_MIN, INT64_MAX, 1));
  // A round trip beyond int64, which would wrap to a negative one.
  EXPECT_FALSE(estimator.Add(INT64_MIN, 0, 0, INT64_MAX));
  EXPECT_FALSE(estimator.estimate().valid);
}

TEST(ClockOffsetEstimatorTest, ResetForgetsAPeersOldClock) {
  ClockOffsetEstimator estimator(seconds(10));
  const Exchange e = Make(0, kMs, kMs, kMs);
  ASSERT_TRUE(estimator.Add(e.t0, e.t1, e.t2, e.t3));
  estimator.Reset();
  EXPECT_FALSE(estimator.estimate().valid);
}

TEST(ClockOffsetEstimatorTest, RingKeepsOnlyTheLatestExchanges) {
  ClockOffsetEstimator estimator(seconds(1000));
  // The quickest exchange first, then more than the ring holds.
  Exchange quick = Make(0, 0, 1, 1);
  ASSERT_TRUE(estimator.Add(quick.t0, quick.t1, quick.t2, quick.t3));
  for (size_t i = 1; i <= ClockOffsetEstimator::kMaxExchanges; ++i) {
    const Exchange e = Make(static_cast<int64_t>(i) * kMs, 0, 10, 10);
    ASSERT_TRUE(estimator.Add(e.t0, e.t1, e.t2, e.t3));
  }
  EXPECT_EQ(estimator.estimate().uncertainty_ns, 10);
}

}  // namespace
}  // namespace aos::message_bridge
