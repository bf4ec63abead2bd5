#include "aos/events/timer_anticipation.h"

#include "gtest/gtest.h"

namespace aos {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

monotonic_clock::time_point At(std::chrono::nanoseconds t) {
  return monotonic_clock::epoch() + t;
}

// Off: the kernel timer is armed for the timer's time, and nothing waits.
TEST(TimerAnticipationTest, OffArmsForTheTime) {
  TimerAnticipation off;
  EXPECT_EQ(off.lead_ns(), 0);
  EXPECT_EQ(off.KernelTime(At(milliseconds(10)), At(milliseconds(0))),
            At(milliseconds(10)));
  EXPECT_FALSE(
      off.ShouldWait(At(milliseconds(0)), At(microseconds(10)), 50'000));
}

// A fixed lead: armed that much early, but only for a wait of at least
// kMinWaitPerLead leads, so spinning takes at most that share of the time.
TEST(TimerAnticipationTest, FixedLeadArmsEarlyForLongWaitsOnly) {
  TimerAnticipationCounters counters;
  TimerAnticipation fixed(false, 50'000, &counters);
  EXPECT_EQ(counters.lead_ns, 50'000);
  EXPECT_FALSE(counters.automatic);
  EXPECT_EQ(fixed.KernelTime(At(milliseconds(10)), At(milliseconds(0))),
            At(milliseconds(10) - microseconds(50)));
  // 10 leads exactly: still early; below: on time.
  EXPECT_EQ(fixed.KernelTime(At(microseconds(500)), At(microseconds(0))),
            At(microseconds(450)));
  EXPECT_EQ(fixed.KernelTime(At(microseconds(499)), At(microseconds(0))),
            At(microseconds(499)));
  // A fixed lead learns nothing.
  fixed.Learn(1'000'000);
  EXPECT_EQ(counters.lead_ns, 50'000);
}

// A wait only for a time still to come and within the lead the kernel
// timer was armed with; it ends no earlier than the time (the handler never
// starts early) and counts the early wakeup and the time spun.
TEST(TimerAnticipationTest, WaitsOnlyWithinTheAppliedLead) {
  TimerAnticipationCounters counters;
  TimerAnticipation fixed(false, 200'000, &counters);
  const monotonic_clock::time_point t = At(milliseconds(5));
  EXPECT_TRUE(fixed.ShouldWait(t, t + microseconds(30), 200'000));
  EXPECT_TRUE(fixed.ShouldWait(t, t + microseconds(200), 200'000));
  // Further off than the lead applied (a timerfd armed on time, or an event
  // left from before a re-arm): no wait, whatever the configured lead.
  EXPECT_FALSE(fixed.ShouldWait(t, t + microseconds(201), 200'000));
  EXPECT_FALSE(fixed.ShouldWait(t, t + microseconds(30), 0));
  // Passed already.
  EXPECT_FALSE(fixed.ShouldWait(t, t, 200'000));
  EXPECT_FALSE(fixed.ShouldWait(t, t - microseconds(5), 200'000));
  for (int i = 0; i < 20; ++i) {
    const monotonic_clock::time_point due =
        monotonic_clock::now() + microseconds(30);
    fixed.Woke(due - microseconds(200), monotonic_clock::now());
    const monotonic_clock::time_point woke = fixed.WaitUntil(due);
    EXPECT_GE(woke, due);
    EXPECT_GE(monotonic_clock::now(), due);
  }
  EXPECT_EQ(counters.wakeups, 20u);
  EXPECT_EQ(counters.early_wakeups, 20u);
  EXPECT_GT(counters.spin_ns, 0u);
  EXPECT_LE(counters.spin_ns, 20u * 30'000u + 20u * 1'000'000u);
  // A time already passed: no early wakeup counted.
  const monotonic_clock::time_point now = monotonic_clock::now();
  fixed.WaitUntil(now - microseconds(5));
  EXPECT_EQ(counters.early_wakeups, 20u);
  // Reset keeps the lead, clears the window.
  counters.Reset();
  EXPECT_EQ(counters.wakeups, 0u);
  EXPECT_EQ(counters.spin_ns, 0u);
  EXPECT_EQ(counters.lead_ns, 200'000);
}

// Automatic: the lead settles near the 75th percentile of the kernel's
// lateness, never above kMaxAutomaticLeadNs, never below 0.
TEST(TimerAnticipationTest, AutomaticLeadFollowsTheLatenessQuantile) {
  TimerAnticipationCounters counters;
  TimerAnticipation automatic(true, 0, &counters);
  EXPECT_TRUE(counters.automatic);
  EXPECT_EQ(counters.lead_ns, 0);
  // Lateness 10, 20, ..., 100 us in turn: the 75th percentile is 70-80 us, and
  // the estimate moves by 1.5 us steps.
  for (int i = 0; i < 20'000; ++i) automatic.Learn((i % 10 + 1) * 10'000);
  EXPECT_GE(counters.lead_ns, 70'000);
  EXPECT_LE(counters.lead_ns, 86'000);
  // A kernel always 1 ms late: capped.
  for (int i = 0; i < 1'000; ++i) automatic.Learn(1'000'000);
  EXPECT_EQ(counters.lead_ns, TimerAnticipation::kMaxAutomaticLeadNs);
  // Always on time: back to 0, and armed for the time itself.
  for (int i = 0; i < 1'000; ++i) automatic.Learn(0);
  EXPECT_EQ(counters.lead_ns, 0);
  EXPECT_EQ(automatic.KernelTime(At(milliseconds(10)), At(milliseconds(0))),
            At(milliseconds(10)));
}

}  // namespace
}  // namespace aos
