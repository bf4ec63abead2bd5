#include "tools/bench/forwarded_latency_goal.h"

#include <cmath>

#include "gtest/gtest.h"

namespace aos::bench {
namespace {

TEST(ForwardedLatencyGoalTest, AtOrUnderTheSumMeetsIt) {
  const ForwardedLatencyVerdict verdict =
      JudgeForwardedLatency(150.0, 160.0, 150.0, 1.0);
  EXPECT_TRUE(verdict.met);
  EXPECT_FALSE(verdict.below_floor);
  EXPECT_DOUBLE_EQ(verdict.ratio, 1.0);
  EXPECT_EQ(ForwardedLatencyText(verdict),
            "1.00x: met (the bare relays: 1.07x)");
}

// The relays' better run over the sum too: the machine, not the bridges.
TEST(ForwardedLatencyGoalTest, RelaysOverTheSumAreTheFloor) {
  const ForwardedLatencyVerdict verdict =
      JudgeForwardedLatency(170.0, 162.0, 150.0, 1.0);
  EXPECT_FALSE(verdict.met);
  EXPECT_TRUE(verdict.below_floor);
  EXPECT_EQ(ForwardedLatencyText(verdict),
            "1.13x: MISSED; below what this machine allows: the bare relays "
            "took 1.08x the hops' sum in their better run (the bridges 1.05x "
            "of that)");
}

// Relays that reached the sum show the goal is within the machine's reach.
TEST(ForwardedLatencyGoalTest, RelaysUnderTheSumLeaveTheMissToTheBridges) {
  const ForwardedLatencyVerdict verdict =
      JudgeForwardedLatency(170.0, 145.5, 150.0, 1.0);
  EXPECT_FALSE(verdict.met);
  EXPECT_FALSE(verdict.below_floor);
  EXPECT_EQ(ForwardedLatencyText(verdict),
            "1.13x: MISSED; the bare relays took 0.97x: the rest is the "
            "bridges'");
}

// Relays exactly at the goal reached it.
TEST(ForwardedLatencyGoalTest, RelaysAtTheGoalAreNotAFloor) {
  EXPECT_FALSE(JudgeForwardedLatency(170.0, 150.0, 150.0, 1.0).below_floor);
}

TEST(ForwardedLatencyGoalTest, NothingMeasuredIsNeitherMetNorAFloor) {
  const ForwardedLatencyVerdict no_sum =
      JudgeForwardedLatency(170.0, 160.0, 0.0, 1.0);
  EXPECT_FALSE(no_sum.met);
  EXPECT_FALSE(no_sum.below_floor);
  EXPECT_TRUE(std::isnan(no_sum.ratio));
  EXPECT_EQ(ForwardedLatencyText(no_sum),
            "not measured (no hops' sum): MISSED");
  const ForwardedLatencyVerdict no_relays =
      JudgeForwardedLatency(170.0, NAN, 150.0, 1.0);
  EXPECT_FALSE(no_relays.below_floor);
  EXPECT_EQ(ForwardedLatencyText(no_relays),
            "1.13x: MISSED (the bare relays: not measured)");
  EXPECT_EQ(ForwardedLatencyText(JudgeForwardedLatency(140.0, NAN, 150.0, 1.0)),
            "0.93x: met (the bare relays: not measured)");
}

}  // namespace
}  // namespace aos::bench
