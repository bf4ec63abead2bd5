#include "aos/events/timing_path.h"

#include <array>
#include <vector>

#include "gtest/gtest.h"

namespace aos::timing {
namespace {

using std::chrono::milliseconds;

PathOrigins Origins(std::initializer_list<PathOrigin> list) {
  PathOrigins origins;
  for (const PathOrigin& origin : list) origins.Add(origin);
  return origins;
}

monotonic_clock::time_point At(int64_t ms) {
  return monotonic_clock::time_point(milliseconds(ms));
}

PathOrigin Origin(uint32_t id, uint16_t hops, int64_t ms) {
  return PathOrigin{.id = id, .hops = hops, .monotonic_time_ns = ms * 1000000};
}

TEST(PathTimingsTest, AgesByOriginAndHopsWithDeadlineOverruns) {
  PathTimings paths;
  paths.set_deadline(milliseconds(5));
  paths.Record(Origins({Origin(1, 2, 10), Origin(2, 1, 12)}), At(14));
  paths.Record(Origins({Origin(1, 2, 20)}), At(27));
  paths.Record(Origins({Origin(1, 3, 20)}), At(21));  // Another route.
  ASSERT_EQ(paths.size(), 3u);
  const PathTiming& first = paths.begin()[0];
  EXPECT_EQ(first.origin_id, 1u);
  EXPECT_EQ(first.hops, 2u);
  EXPECT_EQ(first.count(), 2u);
  EXPECT_DOUBLE_EQ(first.age.statistic().min(), 4e-3);
  EXPECT_DOUBLE_EQ(first.age.statistic().max(), 7e-3);
  EXPECT_EQ(first.age.histogram().max_ns(), 7000000);
  EXPECT_EQ(first.deadline_overruns, 1u);
  EXPECT_EQ(paths.begin()[1].origin_id, 2u);
  EXPECT_EQ(paths.begin()[1].deadline_overruns, 0u);
  EXPECT_EQ(paths.begin()[2].hops, 3u);
}

TEST(PathTimingsTest, PathsBeyondTheBoundAreCountedNotKept) {
  PathTimings paths;
  for (uint32_t id = 1; id <= kMaxPathsPerEntry + 2; ++id) {
    paths.Record(Origins({Origin(id, 1, 0)}), At(1));
  }
  EXPECT_EQ(paths.size(), kMaxPathsPerEntry);
  EXPECT_EQ(paths.dropped_samples(), 2u);
  paths.Reset();
  EXPECT_EQ(paths.size(), 0u);
  EXPECT_EQ(paths.dropped_samples(), 0u);
}

TEST(PathTimingsTest, MergeAddsPathByPathAndKeepsTheDeadline) {
  PathTimings a;
  a.Record(Origins({Origin(1, 1, 0)}), At(2));
  PathTimings b;
  b.set_deadline(milliseconds(3));
  PathOrigin uncertain = Origin(1, 1, 0);
  uncertain.uncertainty_us = 250;
  b.Record(Origins({uncertain, Origin(2, 1, 0)}), At(4));
  b.CountInvalid(3);
  a.Merge(b);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a.begin()[0].count(), 2u);
  EXPECT_EQ(a.begin()[0].deadline_overruns, 1u);
  EXPECT_EQ(a.begin()[0].max_uncertainty_ns, 250000);
  EXPECT_EQ(a.begin()[1].max_uncertainty_ns, 0);
  EXPECT_EQ(a.invalid_origins(), 3u);
  EXPECT_EQ(a.deadline_ns(), 3000000);
}

TEST(SentOriginsTest, CountsPerOriginAndHops) {
  SentOrigins sent;
  sent.Record(Origins({Origin(1, 1, 0), Origin(2, 2, 0)}));
  sent.Record(Origins({Origin(1, 1, 5)}));
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent.begin()[0].count, 2u);
  EXPECT_EQ(sent.begin()[1].hops, 2u);
  SentOrigins many;
  for (uint32_t id = 1; id <= 2 * kMaxPathOrigins + 1; ++id) {
    many.Record(Origins({Origin(id, 1, 0)}));
  }
  EXPECT_EQ(many.dropped(), 1u);
  sent.Merge(many);
  // Its own dropped one, and (8, 1): ours has (2, 2) as well.
  EXPECT_EQ(sent.dropped(), 1u + 1u);
}

// Record() counts a message like its last one without a search: whatever
// the messages, the counts are those of counting each origin one by one.
TEST(SentOriginsTest, RepeatedMessagesCountAsTheirOrigins) {
  SentOrigins sent;
  const PathOrigins four = Origins(
      {Origin(1, 1, 0), Origin(2, 1, 0), Origin(3, 2, 0), Origin(4, 1, 0)});
  for (int i = 0; i < 3; ++i) sent.Record(four);
  // Another uncertainty or time is the same (origin, hops).
  PathOrigin uncertain = Origin(1, 1, 9);
  uncertain.uncertainty_us = 40;
  sent.Record(
      Origins({uncertain, Origin(2, 1, 9), Origin(3, 2, 9), Origin(4, 1, 9)}));
  // Fewer, another order, another hop count, none: each counted as it is.
  sent.Record(Origins({Origin(2, 1, 0)}));
  sent.Record(Origins({Origin(2, 1, 0)}));
  sent.Record(Origins({Origin(4, 1, 0), Origin(1, 1, 0)}));
  sent.Record(Origins({Origin(4, 1, 0), Origin(1, 1, 0)}));
  sent.Record(Origins({Origin(4, 2, 0), Origin(1, 1, 0)}));
  sent.Record(PathOrigins());
  sent.Record(PathOrigins());
  sent.Record(four);
  std::vector<std::array<uint64_t, 3>> counts;
  for (const SentOriginCount& origin : sent) {
    counts.push_back({origin.origin_id, origin.hops, origin.count});
  }
  EXPECT_EQ(counts,
            (std::vector<std::array<uint64_t, 3>>{
                {1, 1, 8}, {2, 1, 7}, {3, 2, 5}, {4, 1, 7}, {4, 2, 1}}));
  EXPECT_EQ(sent.dropped(), 0u);
  // Reset forgets the last message too.
  sent.Reset();
  sent.Record(four);
  ASSERT_EQ(sent.size(), 4u);
  EXPECT_EQ(sent.begin()[0].count, 1u);
}

// An origin the list has no room for is counted as dropped each time it is
// sent, repeated or not.
TEST(SentOriginsTest, RepeatedDroppedOriginsCountEachTime) {
  SentOrigins sent;
  for (uint32_t id = 1; id <= 2 * kMaxPathOrigins; ++id) {
    sent.Record(Origins({Origin(id, 1, 0)}));
  }
  const PathOrigins beyond = Origins({Origin(1, 1, 0), Origin(99, 1, 0)});
  for (int i = 0; i < 3; ++i) sent.Record(beyond);
  EXPECT_EQ(sent.dropped(), 3u);
  EXPECT_EQ(sent.begin()[0].count, 4u);
  EXPECT_EQ(sent.size(), 2 * kMaxPathOrigins);
}

}  // namespace
}  // namespace aos::timing
