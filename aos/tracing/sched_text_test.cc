#include "aos/tracing/sched_text.h"

#include "gtest/gtest.h"

namespace aos::tracing {
namespace {

// As this machine's kernel (6.x) prints them, with a comm holding spaces
// and dashes, and the older "success=1" wakeup field.
constexpr char kText[] =
    "# tracer: nop\n"
    "#\n"
    "# entries-in-buffer/entries-written: 4/10   #P:2\n"
    "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n"
    "            bash-31080   [000] d..2. 39093.225162: sched_switch: "
    "prev_comm=bash prev_pid=31080 prev_prio=120 prev_state=S ==> "
    "next_comm=swapper/0 next_pid=0 next_prio=120\n"
    "          <idle>-0       [001] dNs4. 39093.232041: sched_wakeup: "
    "comm=rcu_preempt pid=15 prio=120 target_cpu=001\n"
    " Web Content-77  [001] d..2. 39093.240062: sched_switch: "
    "prev_comm=Web Content prev_pid=77 prev_prio=49 prev_state=R+ ==> "
    "next_comm=kworker/u4:1-ev next_pid=88 next_prio=94\n"
    "          <idle>-0       [000] dNh4. 12.5: sched_wakeup: "
    "comm=ping pid=9 prio=94 success=1 target_cpu=000\n";

TEST(SchedTextTest, ReadsSwitchesAndWakeups) {
  const SchedText sched = ParseSchedText(kText);
  EXPECT_EQ(sched.unparsed, 0);
  EXPECT_EQ(sched.overwritten, 6u);
  ASSERT_EQ(sched.events.size(), 4u);

  const SchedEvent& first = sched.events[0];
  EXPECT_EQ(first.kind, SchedKind::kSwitch);
  EXPECT_EQ(first.cpu, 0);
  EXPECT_EQ(first.monotonic_ns, 39093'225162'000);
  EXPECT_EQ(first.prev.comm, "bash");
  EXPECT_EQ(first.prev.pid, 31080);
  EXPECT_EQ(first.prev.prio, 120);
  EXPECT_EQ(first.prev_state, "S");
  EXPECT_EQ(first.next.comm, "swapper/0");
  EXPECT_EQ(first.next.pid, 0);

  const SchedEvent& wakeup = sched.events[1];
  EXPECT_EQ(wakeup.kind, SchedKind::kWakeup);
  EXPECT_EQ(wakeup.cpu, 1);
  EXPECT_EQ(wakeup.next.comm, "rcu_preempt");
  EXPECT_EQ(wakeup.next.pid, 15);

  const SchedEvent& spaces = sched.events[2];
  EXPECT_EQ(spaces.prev.comm, "Web Content");
  EXPECT_EQ(spaces.prev.pid, 77);
  EXPECT_EQ(spaces.prev.prio, 49);
  EXPECT_EQ(spaces.prev_state, "R");
  EXPECT_EQ(spaces.next.comm, "kworker/u4:1-ev");
  EXPECT_EQ(spaces.next.pid, 88);
  EXPECT_EQ(spaces.next.prio, 94);

  const SchedEvent& old = sched.events[3];
  EXPECT_EQ(old.monotonic_ns, 12'500'000'000);
  EXPECT_EQ(old.cpu, 0);
  EXPECT_EQ(old.next.comm, "ping");
  EXPECT_EQ(old.next.prio, 94);
}

TEST(SchedTextTest, CountsLinesItCannotRead) {
  const SchedText sched = ParseSchedText(
      "garbage\n"
      "  x-1 [0a1] d..2. 1.000001: sched_switch: prev_comm=x prev_pid=1 "
      "prev_prio=120 prev_state=S ==> next_comm=y next_pid=2 next_prio=120\n"
      "  x-1 [001] d..2. 1.000001: sched_switch: prev_comm=x prev_pid=one "
      "prev_prio=120 prev_state=S ==> next_comm=y next_pid=2 next_prio=120\n"
      "  x-1 [001] d..2. 1.000001: sched_switch: prev_comm=x\n"
      "  x-1 [001] d..2. 1.000001: sched_wakeup: comm=x pid=2\n"
      "  x-1 [001] d..2. 1.0000000001: sched_wakeup: comm=x pid=2 prio=1 "
      "target_cpu=1\n"
      "  x-1 [001] d..2. -1.5: sched_wakeup: comm=x pid=2 prio=1 "
      "target_cpu=1\n"
      "  x-1 [001] d..2. 99999999999.5: sched_wakeup: comm=x pid=2 prio=1 "
      "target_cpu=1\n"
      "\n");
  EXPECT_TRUE(sched.events.empty());
  EXPECT_EQ(sched.unparsed, 8);
}

TEST(SchedTextTest, UserPriorityAsChrtAndNiceSayIt) {
  EXPECT_EQ(UserPriority(49), "rtprio 50");
  EXPECT_EQ(UserPriority(94), "rtprio 5");
  EXPECT_EQ(UserPriority(0), "rtprio 99");
  EXPECT_EQ(UserPriority(120), "");
  EXPECT_EQ(UserPriority(115), "nice -5");
}

}  // namespace
}  // namespace aos::tracing
