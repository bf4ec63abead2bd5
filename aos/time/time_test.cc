#include "aos/time/time.h"

#include <sstream>

#include "gtest/gtest.h"

namespace aos {
namespace {

template <typename T>
std::string Print(const T& value) {
  std::stringstream stream;
  stream << value;
  return stream.str();
}

TEST(TimeTest, MonotonicPrintsSecondsWithNanoseconds) {
  using std::chrono::nanoseconds;
  EXPECT_EQ(Print(monotonic_clock::time_point(nanoseconds(634527158294370))),
            "634527.158294370sec");
  EXPECT_EQ(Print(monotonic_clock::epoch()), "0.000000000sec");
  EXPECT_EQ(Print(monotonic_clock::time_point(nanoseconds(-1500000000))),
            "-1.500000000sec");
  EXPECT_EQ(Print(monotonic_clock::min_time), "min_time");
}

TEST(TimeTest, RealtimePrintsUtcDate) {
  using std::chrono::nanoseconds;
  EXPECT_EQ(Print(realtime_clock::time_point(nanoseconds(1740078734089194802))),
            "2025-02-20_19-12-14.089194802");
  EXPECT_EQ(Print(realtime_clock::min_time), "min_time");
}

TEST(TimeTest, ClocksMoveAndConvert) {
  const monotonic_clock::time_point a = monotonic_clock::now();
  const monotonic_clock::time_point b = monotonic_clock::now();
  EXPECT_LE(a, b);
  EXPECT_GT(realtime_clock::now().time_since_epoch().count(), 0);
  EXPECT_DOUBLE_EQ(DurationInSeconds(std::chrono::microseconds(1500)), 0.0015);
}

TEST(TimeTest, ToTimespecSplitsSecondsAndNanoseconds) {
  const struct timespec zero = ToTimespec(std::chrono::nanoseconds(0));
  EXPECT_EQ(zero.tv_sec, 0);
  EXPECT_EQ(zero.tv_nsec, 0);
  const struct timespec t = ToTimespec(std::chrono::nanoseconds(1500000001));
  EXPECT_EQ(t.tv_sec, 1);
  EXPECT_EQ(t.tv_nsec, 500000001);
  const struct timespec whole = ToTimespec(std::chrono::seconds(86400));
  EXPECT_EQ(whole.tv_sec, 86400);
  EXPECT_EQ(whole.tv_nsec, 0);
}

}  // namespace
}  // namespace aos
