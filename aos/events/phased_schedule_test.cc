#include "aos/events/phased_schedule.h"

#include "gtest/gtest.h"

namespace aos {
namespace {

using std::chrono::milliseconds;

monotonic_clock::time_point At(int64_t ms) {
  return monotonic_clock::time_point(milliseconds(ms));
}

TEST(PhasedScheduleTest, IterateGoesToTheFirstBoundaryStrictlyAfterNow) {
  PhasedSchedule schedule(milliseconds(10), milliseconds(3), At(0));
  // Reset at 0: the last boundary is -7, the latest at or before 0.
  EXPECT_EQ(schedule.sleep_time(), At(-7));
  EXPECT_EQ(schedule.Iterate(At(0)), 1);
  EXPECT_EQ(schedule.sleep_time(), At(3));
  // Exactly on a boundary: the next one.
  EXPECT_EQ(schedule.Iterate(At(3)), 1);
  EXPECT_EQ(schedule.sleep_time(), At(13));
  // 3.5 intervals late: every boundary passed is counted.
  EXPECT_EQ(schedule.Iterate(At(48)), 4);
  EXPECT_EQ(schedule.sleep_time(), At(53));
  // Before the planned boundary: nothing passed.
  EXPECT_EQ(schedule.Iterate(At(50)), 0);
  // Negative times too.
  PhasedSchedule early(milliseconds(10), milliseconds(0), At(-25));
  EXPECT_EQ(early.Iterate(At(-25)), 1);
  EXPECT_EQ(early.sleep_time(), At(-20));
}

TEST(PhasedScheduleTest, ANewGridNeverMovesTheNextCallLater) {
  PhasedSchedule schedule(milliseconds(10), milliseconds(0), At(0));
  ASSERT_EQ(schedule.Iterate(At(0)), 1);  // Next: 10.
  // A larger offset moves it back by a whole new interval less.
  schedule.SetIntervalAndOffset(milliseconds(20), milliseconds(3));
  EXPECT_LE(schedule.sleep_time(), At(10));
  EXPECT_EQ(schedule.sleep_time(), At(10 + 3 - 20));
  EXPECT_EQ(schedule.Iterate(At(-7)), 0);
  // With a time: the first new boundary after it.
  schedule.SetIntervalAndOffset(milliseconds(20), milliseconds(5), At(30));
  EXPECT_EQ(schedule.sleep_time(), At(45));
  EXPECT_EQ(schedule.Iterate(At(30)), 0);
  EXPECT_EQ(schedule.Iterate(At(45)), 1);
}

TEST(PhasedScheduleDeathTest, OffsetsOutsideTheIntervalAbort) {
  EXPECT_DEATH(PhasedSchedule(milliseconds(10), milliseconds(10), At(0)),
               "offset 10000000ns must be in");
  EXPECT_DEATH(PhasedSchedule(milliseconds(0), milliseconds(0), At(0)),
               "interval must be positive");
}

}  // namespace
}  // namespace aos
