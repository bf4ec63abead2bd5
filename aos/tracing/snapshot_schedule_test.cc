#include "aos/tracing/snapshot_schedule.h"

#include "gtest/gtest.h"

namespace aos::tracing {
namespace {

constexpr int64_t kMs = 1'000'000;

TEST(SnapshotScheduleTest, WritesOnceTheAfterWindowPassed) {
  SnapshotSchedule schedule(100 * kMs, 1000 * kMs);
  EXPECT_FALSE(schedule.Due(0).has_value());
  schedule.Trigger(10 * kMs, 1);
  EXPECT_FALSE(schedule.Due(109 * kMs).has_value());
  EXPECT_EQ(schedule.Due(110 * kMs), 10 * kMs);
  EXPECT_FALSE(schedule.Due(111 * kMs).has_value());
  EXPECT_EQ(schedule.TakeSuppressed(), 0u);
}

TEST(SnapshotScheduleTest, TriggersInTheWindowJoinIt) {
  SnapshotSchedule schedule(100 * kMs, 1000 * kMs);
  schedule.Trigger(10 * kMs, 1);
  schedule.Trigger(50 * kMs, 3);
  schedule.Trigger(110 * kMs, 1);
  EXPECT_EQ(schedule.Due(110 * kMs), 10 * kMs);
  EXPECT_EQ(schedule.TakeSuppressed(), 0u);
}

// Thresholds crossed every cycle at 1 kHz for 3 s, polled every 5 ms:
// one snapshot a second, every other trigger counted as suppressed and
// reported with the next snapshot.
TEST(SnapshotScheduleTest, StormIsRateLimitedAndCounted) {
  SnapshotSchedule schedule(100 * kMs, 1000 * kMs);
  std::vector<int64_t> written;
  std::vector<uint64_t> suppressed;
  uint64_t triggers = 0;
  for (int64_t now = 5 * kMs; now <= 3000 * kMs; now += 5 * kMs) {
    schedule.Trigger(now, 5);
    triggers += 5;
    if (std::optional<int64_t> due = schedule.Due(now)) {
      written.push_back(*due);
      suppressed.push_back(schedule.TakeSuppressed());
    }
  }
  EXPECT_EQ(written, (std::vector<int64_t>{5 * kMs, 1005 * kMs, 2005 * kMs}));
  // Joined the first window: 20 polls after it (5..100 ms) are part of it;
  // the rest until 1005 ms are suppressed.
  EXPECT_EQ(suppressed[0], 0u);
  EXPECT_GT(suppressed[1], 0u);
  EXPECT_EQ(suppressed[1], suppressed[2]);
  EXPECT_LT(schedule.total_suppressed(), triggers);
}

}  // namespace
}  // namespace aos::tracing
