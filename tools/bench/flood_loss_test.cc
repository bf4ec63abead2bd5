#include "tools/bench/flood_loss.h"

#include <cmath>

#include "gtest/gtest.h"

namespace aos::bench {
namespace {

// Run 5 of 2026-11-27 (docs/benchmarks.md): 750 k sent at 150 k/s.
TEST(FloodLossTest, SplitsByWhereTheMessagesWentMissing) {
  const FloodLoss loss = SplitFloodLoss(749861, 737767, 0, 18115, 6000);
  EXPECT_EQ(loss.unread_on_pi1, 12094);
  EXPECT_EQ(loss.refused_on_pi2, 6000);
  EXPECT_EQ(loss.in_dds, 21);
}

// A write that failed was read on pi1: DDS's, not the channel's.
TEST(FloodLossTest, FailedWritesAreNotUnread) {
  const FloodLoss loss = SplitFloodLoss(1000, 900, 40, 100, 0);
  EXPECT_EQ(loss.unread_on_pi1, 60);
  EXPECT_EQ(loss.in_dds, 40);
}

// Messages of other channels make written exceed sent: nothing on pi1.
TEST(FloodLossTest, NoPartIsNegative) {
  const FloodLoss loss = SplitFloodLoss(749858, 749879, 0, 59094, 5575);
  EXPECT_EQ(loss.unread_on_pi1, 0);
  EXPECT_EQ(loss.refused_on_pi2, 5575);
  EXPECT_EQ(loss.in_dds, 53519);
  const FloodLoss none = SplitFloodLoss(100, 90, 0, 0, 0);
  EXPECT_EQ(none.unread_on_pi1, 10);
  EXPECT_EQ(none.in_dds, 0);
}

// Refusals at the flood's end are not in lost yet: the measured parts stay
// as measured, and DDS gets nothing.
TEST(FloodLossTest, MeasuredPartsAreKeptWhenLostLagsBehind) {
  const FloodLoss loss = SplitFloodLoss(100, 50, 0, 60, 40);
  EXPECT_EQ(loss.unread_on_pi1, 50);
  EXPECT_EQ(loss.refused_on_pi2, 40);
  EXPECT_EQ(loss.in_dds, 0);
}

TEST(FloodLossTest, TextNamesEachPlaceWithTheHeadroom) {
  EXPECT_EQ(
      FloodLossText(
          {.unread_on_pi1 = 12094, .in_dds = 21, .refused_on_pi2 = 6000},
          {.longest_one_way_us = 23'400,
           .catch_up_headroom_us = 50'000.0 / 3,
           .lag_headroom_us = 200'000.0 / 3,
           .flood_largest_burst = 2458}),
      "12094 unread on pi1 (the channel lapped its bridge: more than 66.7 ms "
      "behind), 21 in DDS, 6000 refused on pi2 (a catch-up faster than the "
      "channel's rate: a stall over 16.7 ms; the longest delay was 23.4 ms; "
      "the flood sent up to 2458 in one tick)");
  EXPECT_EQ(FloodLossText({.refused_on_pi2 = 5}, {}),
            "5 refused on pi2 (a catch-up faster than the channel's rate)");
  EXPECT_EQ(FloodLossText({}, {.longest_one_way_us = 1000}), "");
}

// bridge_bench.json's /bench: 200 k/s declared, 50 ms stored (a queue of
// 10000), flooded at 150 k/s.
TEST(FloodLossTest, HeadroomOfTheBenchChannel) {
  EXPECT_NEAR(CatchUpHeadroomSeconds(200000, 0.05, 150000), 0.05 / 3, 1e-12);
  EXPECT_NEAR(ReaderLagHeadroomSeconds(200000, 0.05, 150000), 0.2 / 3, 1e-12);
  EXPECT_TRUE(std::isnan(CatchUpHeadroomSeconds(200000, 0.05, 200000)));
  EXPECT_TRUE(std::isnan(ReaderLagHeadroomSeconds(200000, 0, 150000)));
  EXPECT_TRUE(std::isnan(CatchUpHeadroomSeconds(200000, 0.05, 0)));
}

TEST(FloodLossTest, LargestAddedIsTheNewMaximumOrTheHighestBucketThatGrew) {
  timing::LatencyHistogram before;
  before.Record(30'000'000);
  before.Record(1'000);
  timing::LatencyHistogram after = before;
  EXPECT_EQ(LargestAddedNs(before, after), -1);
  after.Record(2'000'000);
  after.Record(5'000);
  const int64_t added = LargestAddedNs(before, after);
  // Within the bucket of 2 ms (at most 1/32 wide), never below the sample.
  EXPECT_GE(added, 2'000'000);
  EXPECT_LE(added, 2'000'000 + 2'000'000 / 32);
  after.Record(40'000'000);
  EXPECT_EQ(LargestAddedNs(before, after), 40'000'000);
}

}  // namespace
}  // namespace aos::bench
