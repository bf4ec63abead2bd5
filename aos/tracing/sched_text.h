#ifndef AOS_TRACING_SCHED_TEXT_H_
#define AOS_TRACING_SCHED_TEXT_H_

// The kernel scheduler's events as ftrace prints them: the `trace` file of
// a tracefs instance with sched:sched_switch and sched:sched_wakeup on.
//
//   SchedText sched = ParseSchedText(text);
//   for (const SchedEvent& event : sched.events) { ... }
//
// A line is
//   "  ping-4242  [001] d..2. 39093.225162: sched_switch: prev_comm=ping
//    prev_pid=4242 prev_prio=94 prev_state=S ==> next_comm=swapper/1
//    next_pid=0 next_prio=120"
// (one line). Times are the instance's trace clock; with the `mono` clock
// they are CLOCK_MONOTONIC, the event loops' clock. Never trusts the text:
// a line it cannot read is counted, never fatal.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace aos::tracing {

// A task as the scheduler names it. `prio` is the kernel's: 0-98 for
// realtime priorities 99-1 (99 - rtprio), 100-139 for nice -20..19.
struct SchedTask {
  std::string comm;
  int pid = 0;
  int prio = 120;
};

enum class SchedKind { kSwitch, kWakeup };

struct SchedEvent {
  SchedKind kind = SchedKind::kSwitch;
  // A switch: the CPU it happened on. A wakeup: the CPU the task will run on.
  int cpu = 0;
  int64_t monotonic_ns = 0;
  // A switch: the task leaving the CPU. Unused for a wakeup.
  SchedTask prev;
  // A switch: how the leaving task left: "R" (still runnable: preempted),
  // "S" (sleeping), "D", ...; a trailing "+" is dropped.
  std::string prev_state;
  // A switch: the task coming on. A wakeup: the task woken.
  SchedTask next;
};

struct SchedText {
  // In the order of the text (ftrace sorts by time across CPUs).
  std::vector<SchedEvent> events;
  // Lines that are neither comments nor readable events.
  int unparsed = 0;
  // Events the kernel's buffer overwrote before the read, from its
  // "entries-in-buffer/entries-written" header.
  uint64_t overwritten = 0;
};

SchedText ParseSchedText(std::string_view text);

// "rtprio 50", "nice -5", or "" for nice 0: a task's priority as a user
// sets it (chrt, nice), from the kernel's `prio`.
std::string UserPriority(int kernel_prio);

}  // namespace aos::tracing

#endif  // AOS_TRACING_SCHED_TEXT_H_
