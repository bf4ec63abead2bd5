#include "aos/events/path_origins.h"

#include <limits>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aos {
namespace {

using ::testing::ElementsAre;

PathOrigin Origin(uint32_t id, int64_t time, uint16_t hops = 1) {
  return PathOrigin{.id = id, .hops = hops, .monotonic_time_ns = time};
}

std::vector<PathOrigin> All(const PathOrigins& origins) {
  return std::vector<PathOrigin>(origins.begin(), origins.end());
}

TEST(PathOriginIdTest, StableDistinctAndNeverZero) {
  const uint32_t ping = PathOriginId("pi1", "ping", "timer", "ping");
  EXPECT_EQ(ping, PathOriginId("pi1", "ping", "timer", "ping"));
  EXPECT_NE(ping, 0u);
  // Every part counts, and parts do not run into each other.
  EXPECT_NE(ping, PathOriginId("pi2", "ping", "timer", "ping"));
  EXPECT_NE(ping, PathOriginId("pi1", "pong", "timer", "ping"));
  EXPECT_NE(ping, PathOriginId("pi1", "ping", "phased_loop", "ping"));
  EXPECT_NE(ping, PathOriginId("pi1", "ping", "timer", "pin"));
  EXPECT_NE(PathOriginId("", "ab", "timer", "c"),
            PathOriginId("", "a", "timer", "bc"));
}

TEST(PathOriginsTest, OneEntryPerIdWithTheNewestTime) {
  PathOrigins origins;
  origins.Add(Origin(7, 100, 3));
  origins.Add(Origin(8, 50));
  origins.Add(Origin(7, 200, 5));  // Newer: replaces.
  origins.Add(Origin(7, 150, 1));  // Older: ignored.
  origins.Add(Origin(8, 50, 2));   // Same time, more hops: ignored.
  EXPECT_THAT(All(origins), ElementsAre(Origin(7, 200, 5), Origin(8, 50)));
  EXPECT_EQ(origins.dropped(), 0u);
}

TEST(PathOriginsTest, BeyondTheLimitTheNewestAreKeptAndTheRestCounted) {
  PathOrigins origins;
  for (uint32_t id = 1; id <= kMaxPathOrigins; ++id) {
    origins.Add(Origin(id, id * 10));
  }
  EXPECT_EQ(origins.size(), kMaxPathOrigins);
  EXPECT_EQ(origins.dropped(), 0u);
  // Newer than the oldest (id 1 at 10): replaces it.
  origins.Add(Origin(99, 25));
  // Older than everything kept: dropped itself.
  origins.Add(Origin(98, 5));
  EXPECT_EQ(origins.dropped(), 2u);
  EXPECT_EQ(origins.size(), kMaxPathOrigins);
  std::vector<uint32_t> ids;
  for (const PathOrigin& origin : origins) ids.push_back(origin.id);
  EXPECT_THAT(ids, ::testing::UnorderedElementsAre(99, 2, 3, 4));
}

TEST(PathOriginsTest, MergeAddsOriginsAndDropCountsNextHopAddsAHop) {
  PathOrigins a;
  a.Add(Origin(1, 10));
  PathOrigins b;
  for (uint32_t id = 2; id <= kMaxPathOrigins + 2; ++id) b.Add(Origin(id, 20));
  EXPECT_EQ(b.dropped(), 1u);
  a.Merge(b);
  EXPECT_EQ(a.size(), kMaxPathOrigins);
  // One dropped in b, and id 1 (the oldest) pushed out here.
  EXPECT_EQ(a.dropped(), 2u);
  const PathOrigins next = a.NextHop();
  for (const PathOrigin& origin : next) EXPECT_EQ(origin.hops, 2);
  EXPECT_EQ(next.dropped(), a.dropped());
}

// AddHop() works on every place at once (slots()): the origins get one hop
// each, saturating, and nothing else of them changes, however many there
// are and whatever lies past them.
TEST(PathOriginsTest, AddHopSaturatesAndChangesOnlyHops) {
  PathOrigins origins;
  for (uint32_t id = 1; id <= kMaxPathOrigins; ++id) {
    origins.Add(Origin(id, 100 * id, UINT16_MAX));
  }
  origins.Clear();
  PathOrigin uncertain = Origin(7, 123, 3);
  uncertain.uncertainty_us = UINT16_MAX;
  origins.Add(uncertain);
  origins.Add(Origin(8, 456, UINT16_MAX - 1));
  origins.AddHop();
  PathOrigin expected = uncertain;
  expected.hops = 4;
  EXPECT_THAT(All(origins), ElementsAre(expected, Origin(8, 456, UINT16_MAX)));
  origins.AddHop();
  EXPECT_EQ(All(origins)[1].hops, UINT16_MAX);
  EXPECT_EQ(All(origins)[0].uncertainty_us, UINT16_MAX);
}

TEST(PathOriginsTest, TranslatedIntoAnotherNodesClock) {
  PathOrigins origins;
  origins.Add(Origin(5, 1000, 2));
  PathOrigin uncertain = Origin(6, 2000);
  uncertain.uncertainty_us = 9;
  origins.Add(uncertain);
  const PathOrigins there = origins.Translated(-500, 4001);
  std::vector<PathOrigin> all = All(there);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].monotonic_time_ns, 500);
  EXPECT_EQ(all[0].hops, 2);
  EXPECT_EQ(all[0].uncertainty_us, 5);  // 4001 ns, rounded up.
  EXPECT_EQ(all[1].monotonic_time_ns, 1500);
  EXPECT_EQ(all[1].uncertainty_us, 9 + 5);  // Translation errors add.
  EXPECT_EQ(All(origins.Translated(0, int64_t{1} << 40))[0].uncertainty_us,
            UINT16_MAX);
}

TEST(PathOriginsTest, RawRoundTrips) {
  PathOrigins origins;
  origins.Add(Origin(5, 1000, 2));
  origins.Add(Origin(6, 2000, 1));
  uint32_t invalid = 0;
  EXPECT_EQ(PathOrigins::FromRaw(origins.ToRaw(), 2000, &invalid), origins);
  EXPECT_EQ(invalid, 0u);
}

// Origins from shared memory or the network are data, not truth.
TEST(PathOriginsTest, ImpossibleRawOriginsAreDroppedAndCounted) {
  PathOrigins::Raw raw{};
  raw.count = 4;
  raw.origins[0] = Origin(5, 1000);
  raw.origins[1] = Origin(0, 1000);  // No such id.
  raw.origins[2] = Origin(5, 900);   // The same id twice.
  raw.origins[3] = Origin(6, 5000);  // In the future.
  uint32_t invalid = 0;
  PathOrigins origins = PathOrigins::FromRaw(raw, 2000, &invalid);
  EXPECT_THAT(All(origins), ElementsAre(Origin(5, 1000)));
  EXPECT_EQ(invalid, 3u);

  // Later than the bound, but within its own uncertainty: believed.
  raw.origins[3].uncertainty_us = 3;
  invalid = 0;
  origins = PathOrigins::FromRaw(raw, 2000, &invalid);
  EXPECT_EQ(origins.size(), 2u);
  EXPECT_EQ(invalid, 2u);
  raw.origins[3].uncertainty_us = 0;

  raw.origins[1] = Origin(7, 1000, /*hops=*/0);  // No message crossed.
  invalid = 0;
  origins = PathOrigins::FromRaw(raw, 2000, &invalid);
  EXPECT_EQ(invalid, 3u);

  // Times no clock has: no age of them could be computed.
  raw.origins[1] = Origin(7, std::numeric_limits<int64_t>::min());
  raw.origins[3] = Origin(6, kMaxPathOriginTimeNs + 1);
  invalid = 0;
  origins =
      PathOrigins::FromRaw(raw, std::numeric_limits<int64_t>::max(), &invalid);
  EXPECT_EQ(invalid, 3u);

  raw.count = kMaxPathOrigins + 1;  // More than fits: nothing believed.
  invalid = 0;
  origins = PathOrigins::FromRaw(raw, 2000, &invalid);
  EXPECT_TRUE(origins.empty());
  EXPECT_EQ(invalid, kMaxPathOrigins);
  raw.count = 0xffffffff;
  EXPECT_TRUE(PathOrigins::FromRaw(raw, 2000, nullptr).empty());
}

}  // namespace
}  // namespace aos
