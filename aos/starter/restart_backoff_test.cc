#include "aos/starter/restart_backoff.h"

#include "gtest/gtest.h"

namespace aos::starter {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

TEST(RestartBackoffTest, QuickExitsDoubleTheWaitUpToTheMaximum) {
  RestartBackoff backoff({.initial = milliseconds(100),
                          .max = seconds(1),
                          .healthy_after = seconds(1)});
  EXPECT_EQ(backoff.OnExit(milliseconds(5)), milliseconds(100));
  EXPECT_EQ(backoff.OnExit(milliseconds(5)), milliseconds(200));
  EXPECT_EQ(backoff.OnExit(milliseconds(5)), milliseconds(400));
  EXPECT_EQ(backoff.OnExit(milliseconds(5)), milliseconds(800));
  EXPECT_EQ(backoff.OnExit(milliseconds(5)), seconds(1));
  EXPECT_EQ(backoff.OnExit(milliseconds(5)), seconds(1));
  EXPECT_EQ(backoff.quick_exits_in_a_row(), 6);
}

TEST(RestartBackoffTest, AHealthyRunRestartsAtOnceAndResetsTheCount) {
  RestartBackoff backoff({.initial = milliseconds(100),
                          .max = seconds(10),
                          .healthy_after = seconds(1)});
  backoff.OnExit(milliseconds(5));
  backoff.OnExit(milliseconds(5));
  EXPECT_EQ(backoff.OnExit(seconds(1)), nanoseconds(0));
  EXPECT_EQ(backoff.quick_exits_in_a_row(), 0);
  EXPECT_EQ(backoff.OnExit(milliseconds(999)), milliseconds(100));
}

TEST(RestartBackoffTest, ResetForgetsQuickExits) {
  RestartBackoff backoff({});
  backoff.OnExit(milliseconds(1));
  backoff.OnExit(milliseconds(1));
  backoff.Reset();
  EXPECT_EQ(backoff.OnExit(milliseconds(1)), milliseconds(100));
}

// Thousands of quick exits never overflow the doubling.
TEST(RestartBackoffTest, ManyQuickExitsStayAtTheMaximum) {
  RestartBackoff backoff({.initial = milliseconds(1), .max = seconds(10)});
  nanoseconds wait(0);
  for (int i = 0; i < 5000; ++i) wait = backoff.OnExit(nanoseconds(0));
  EXPECT_EQ(wait, seconds(10));
}

}  // namespace
}  // namespace aos::starter
