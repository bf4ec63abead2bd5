#include "tools/bench/forwarded_latency_goal.h"

#include <cmath>

#include "gtest/gtest.h"

namespace aos::bench {
namespace {

TEST(ForwardedLatencyGoalTest, AtOrUnderTheSumMeetsIt) {
  const ForwardedLatencyVerdict verdict = JudgeForwardedLatency(
      {{.hops_sum_us = 150.0, .relays_us = 160.0, .bridges_us = 150.0}}, 1.0);
  EXPECT_TRUE(verdict.met);
  EXPECT_FALSE(verdict.below_floor);
  EXPECT_DOUBLE_EQ(verdict.ratio, 1.0);
  EXPECT_EQ(verdict.rounds, 1);
  EXPECT_EQ(ForwardedLatencyText(verdict),
            "1.00x (median of 1 round): met (the bare relays: 1.07x)");
}

// The relays over the sum too: the machine, not the bridges.
TEST(ForwardedLatencyGoalTest, RelaysOverTheSumAreTheFloor) {
  const ForwardedLatencyVerdict verdict = JudgeForwardedLatency(
      {{.hops_sum_us = 150.0, .relays_us = 162.0, .bridges_us = 170.0}}, 1.0);
  EXPECT_FALSE(verdict.met);
  EXPECT_TRUE(verdict.below_floor);
  EXPECT_EQ(ForwardedLatencyText(verdict),
            "1.13x (median of 1 round): MISSED; below what this machine "
            "allows: the bare relays took 1.08x the hops' sum (the bridges "
            "1.05x the relays)");
}

// Relays that reached the sum show the goal is within the machine's reach.
TEST(ForwardedLatencyGoalTest, RelaysUnderTheSumLeaveTheMissToTheBridges) {
  const ForwardedLatencyVerdict verdict = JudgeForwardedLatency(
      {{.hops_sum_us = 150.0, .relays_us = 145.5, .bridges_us = 170.0}}, 1.0);
  EXPECT_FALSE(verdict.met);
  EXPECT_FALSE(verdict.below_floor);
  EXPECT_EQ(ForwardedLatencyText(verdict),
            "1.13x (median of 1 round): MISSED; the bare relays took 0.97x: "
            "the rest is the bridges'");
}

// Relays exactly at the goal reached it.
TEST(ForwardedLatencyGoalTest, RelaysAtTheGoalAreNotAFloor) {
  EXPECT_FALSE(
      JudgeForwardedLatency(
          {{.hops_sum_us = 150.0, .relays_us = 150.0, .bridges_us = 170.0}},
          1.0)
          .below_floor);
}

// Each round's ratio is of its own sum, and the verdict is the median
// round's: one round of a machine that drifted (the sum and both round
// trips higher) weighs as one, and a single outlier does not decide.
TEST(ForwardedLatencyGoalTest, TheMedianRoundsRatiosDecide) {
  const ForwardedLatencyVerdict verdict = JudgeForwardedLatency(
      {{.hops_sum_us = 100.0, .relays_us = 110.0, .bridges_us = 95.0},
       {.hops_sum_us = 200.0, .relays_us = 210.0, .bridges_us = 190.0},
       {.hops_sum_us = 100.0, .relays_us = 90.0, .bridges_us = 150.0}},
      1.0);
  // Ratios 0.95, 0.95, 1.5: met, although the bridges' p50s have a median
  // (150) over the sums' (100), and their mean over the sums' mean.
  EXPECT_TRUE(verdict.met);
  EXPECT_DOUBLE_EQ(verdict.ratio, 0.95);
  // Relays 1.1, 1.05, 0.9.
  EXPECT_DOUBLE_EQ(verdict.relay_ratio, 1.05);
  EXPECT_EQ(verdict.rounds, 3);
  EXPECT_EQ(ForwardedLatencyText(verdict),
            "0.95x (median of 3 rounds): met (the bare relays: 1.05x)");

  // The relays' median over the goal with the bridges': the floor.
  const ForwardedLatencyVerdict floor = JudgeForwardedLatency(
      {{.hops_sum_us = 100.0, .relays_us = 110.0, .bridges_us = 112.0},
       {.hops_sum_us = 100.0, .relays_us = 95.0, .bridges_us = 104.0},
       {.hops_sum_us = 100.0, .relays_us = 120.0, .bridges_us = 98.0}},
      1.0);
  EXPECT_FALSE(floor.met);
  EXPECT_TRUE(floor.below_floor);
  EXPECT_DOUBLE_EQ(floor.ratio, 1.04);
  EXPECT_DOUBLE_EQ(floor.relay_ratio, 1.1);
  // Each round's bridges over its own relays (112/110, 104/95, 98/120):
  // not the one median over the other (1.04 / 1.1).
  EXPECT_DOUBLE_EQ(floor.bridges_over_relays, 112.0 / 110.0);
  EXPECT_EQ(ForwardedLatencyText(floor),
            "1.04x (median of 3 rounds): MISSED; below what this machine "
            "allows: the bare relays took 1.10x the hops' sum (the bridges "
            "1.02x the relays)");
}

// A round that did not measure the sum or the bridges is left out.
TEST(ForwardedLatencyGoalTest, UnmeasuredRoundsAreLeftOut) {
  const ForwardedLatencyVerdict verdict = JudgeForwardedLatency(
      {{.hops_sum_us = 100.0, .relays_us = 110.0, .bridges_us = 120.0},
       {.hops_sum_us = 0.0, .relays_us = 10.0, .bridges_us = 10.0},
       {.hops_sum_us = 100.0, .relays_us = 110.0, .bridges_us = NAN}},
      1.0);
  EXPECT_EQ(verdict.rounds, 1);
  EXPECT_DOUBLE_EQ(verdict.ratio, 1.2);
  EXPECT_DOUBLE_EQ(verdict.relay_ratio, 1.1);
  EXPECT_TRUE(verdict.below_floor);
}

TEST(ForwardedLatencyGoalTest, NothingMeasuredIsNeitherMetNorAFloor) {
  const ForwardedLatencyVerdict no_sum = JudgeForwardedLatency(
      {{.hops_sum_us = 0.0, .relays_us = 160.0, .bridges_us = 170.0}}, 1.0);
  EXPECT_FALSE(no_sum.met);
  EXPECT_FALSE(no_sum.below_floor);
  EXPECT_TRUE(std::isnan(no_sum.ratio));
  EXPECT_EQ(no_sum.rounds, 0);
  EXPECT_EQ(ForwardedLatencyText(no_sum),
            "not measured (no round with the hops' sum and the bridges): "
            "MISSED");
  EXPECT_TRUE(std::isnan(JudgeForwardedLatency({}, 1.0).ratio));
  const ForwardedLatencyVerdict no_relays = JudgeForwardedLatency(
      {{.hops_sum_us = 150.0, .relays_us = NAN, .bridges_us = 170.0}}, 1.0);
  EXPECT_FALSE(no_relays.below_floor);
  EXPECT_EQ(ForwardedLatencyText(no_relays),
            "1.13x (median of 1 round): MISSED (the bare relays: not "
            "measured)");
  EXPECT_EQ(ForwardedLatencyText(JudgeForwardedLatency(
                {{.hops_sum_us = 150.0, .relays_us = NAN, .bridges_us = 140.0}},
                1.0)),
            "0.93x (median of 1 round): met (the bare relays: not measured)");
}

}  // namespace
}  // namespace aos::bench
