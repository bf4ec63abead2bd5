#include "aos/tracing/sched_tracks.h"

#include <string>

#include "gtest/gtest.h"

namespace aos::tracing {
namespace {

SchedEvent Switch(int cpu, int64_t ns, SchedTask prev, std::string state,
                  SchedTask next) {
  SchedEvent event;
  event.kind = SchedKind::kSwitch;
  event.cpu = cpu;
  event.monotonic_ns = ns;
  event.prev = std::move(prev);
  event.prev_state = std::move(state);
  event.next = std::move(next);
  return event;
}

SchedEvent Wakeup(int cpu, int64_t ns, SchedTask task) {
  SchedEvent event;
  event.kind = SchedKind::kWakeup;
  event.cpu = cpu;
  event.monotonic_ns = ns;
  event.next = std::move(task);
  return event;
}

const SchedTask kIdle0{"swapper/0", 0, 120};
const SchedTask kIdle1{"swapper/1", 0, 120};
const SchedTask kPing{"ping", 9, 94};
const SchedTask kPython{"python3", 77, 49};
const SchedTask kBash{"bash", 100, 120};

// A trace with one loop's process (pid 1) and the window [1000, 5000].
Trace LoopTrace() {
  Trace trace;
  trace.window = TraceWindow{1000, 5000};
  TraceEvent process;
  process.phase = 'M';
  process.name = "process_name";
  process.pid = 1;
  trace.events.push_back(process);
  return trace;
}

// Ping on CPU 1, preempted by a realtime python3 from 2000 to 4000; bash on
// CPU 0, where no loop runs.
SchedText Preempted() {
  SchedText sched;
  sched.events = {
      Switch(1, 500, kIdle1, "R", kPing),
      Switch(0, 1500, kBash, "S", kIdle0),
      Wakeup(1, 1900, kPing),
      Wakeup(0, 1950, kBash),
      Switch(1, 2000, kPing, "R", kPython),
      Switch(1, 4000, kPython, "S", kPing),
  };
  return sched;
}

std::vector<const TraceEvent*> EventsOf(const Trace& trace, int pid,
                                        char phase) {
  std::vector<const TraceEvent*> found;
  for (const TraceEvent& event : trace.events) {
    if (event.pid == pid && event.phase == phase) found.push_back(&event);
  }
  return found;
}

int64_t Arg(const TraceEvent& event, std::string_view key) {
  for (const auto& [name, value] : event.args) {
    if (name == key) return value;
  }
  ADD_FAILURE() << "no argument " << key << " on " << event.name;
  return -1;
}

TEST(SchedTracksTest, ShowsWhatHeldTheLoopsCpu) {
  Trace trace = LoopTrace();
  AddSchedTracks(Preempted(), 0, {9}, &trace);

  // One process after the loop's, with a track for CPU 1 only.
  std::vector<const TraceEvent*> metadata = EventsOf(trace, 2, 'M');
  ASSERT_EQ(metadata.size(), 2u);
  EXPECT_EQ(metadata[0]->text_arg, "kernel: CPUs");
  EXPECT_EQ(metadata[1]->name, "thread_name");
  EXPECT_EQ(metadata[1]->tid, 2);
  EXPECT_EQ(metadata[1]->text_arg, "CPU 1");

  std::vector<const TraceEvent*> slices = EventsOf(trace, 2, 'X');
  ASSERT_EQ(slices.size(), 3u);
  // Ping ran before the window: cut at its start; it left runnable.
  EXPECT_EQ(slices[0]->name, "ping (pid 9, rtprio 5)");
  EXPECT_EQ(slices[0]->ts_ns, 1000);
  EXPECT_EQ(slices[0]->dur_ns, 1000);
  EXPECT_EQ(Arg(*slices[0], "preempted"), 1);
  EXPECT_EQ(slices[1]->name, "python3 (pid 77, rtprio 50)");
  EXPECT_EQ(slices[1]->ts_ns, 2000);
  EXPECT_EQ(slices[1]->dur_ns, 2000);
  EXPECT_EQ(Arg(*slices[1], "preempted"), 0);
  EXPECT_EQ(Arg(*slices[1], "kernel_prio"), 49);
  EXPECT_EQ(Arg(*slices[1], "inferred_start"), 0);
  // Still running when the kernel was read: to the window's end.
  EXPECT_EQ(slices[2]->name, "ping (pid 9, rtprio 5)");
  EXPECT_EQ(slices[2]->ts_ns, 4000);
  EXPECT_EQ(slices[2]->dur_ns, 1000);
  for (const TraceEvent* slice : slices) EXPECT_EQ(slice->tid, 2);

  // Only the loop's wakeup, on the CPU it was woken to.
  std::vector<const TraceEvent*> wakeups = EventsOf(trace, 2, 'i');
  ASSERT_EQ(wakeups.size(), 1u);
  EXPECT_EQ(wakeups[0]->name, "wakeup ping");
  EXPECT_EQ(wakeups[0]->ts_ns, 1900);
  EXPECT_EQ(wakeups[0]->tid, 2);

  EXPECT_TRUE(trace.info.kernel_sched);
  EXPECT_EQ(trace.info.kernel_events, 5u);
  EXPECT_EQ(trace.info.kernel_overwritten, 0u);
  EXPECT_NE(TraceJson(trace).find("\"kernel_sched_events\": 5"),
            std::string::npos)
      << TraceJson(trace);
}

TEST(SchedTracksTest, EveryCpuWhenNoLoopRan) {
  Trace trace = LoopTrace();
  AddSchedTracks(Preempted(), 0, {12345}, &trace);
  std::vector<std::string> tracks;
  for (const TraceEvent* event : EventsOf(trace, 2, 'M')) {
    if (event->name == "thread_name") tracks.push_back(event->text_arg);
  }
  EXPECT_EQ(tracks, (std::vector<std::string>{"CPU 0", "CPU 1"}));
  // bash ran on CPU 0 from the recording's start: cut at the window.
  bool bash = false;
  for (const TraceEvent* slice : EventsOf(trace, 2, 'X')) {
    if (slice->name == "bash (pid 100)") {
      bash = true;
      EXPECT_EQ(slice->ts_ns, 1000);
      EXPECT_EQ(slice->dur_ns, 500);
    }
  }
  EXPECT_TRUE(bash);
  EXPECT_TRUE(EventsOf(trace, 2, 'i').empty());
}

TEST(SchedTracksTest, NoGuessedStartAfterTheBufferOverwrote) {
  SchedText sched = Preempted();
  sched.events.erase(sched.events.begin());  // The switch to ping at 500.
  sched.overwritten = 3;
  Trace trace = LoopTrace();
  AddSchedTracks(sched, 0, {9}, &trace);
  // CPU 1's first switch has no known start for ping: no slice for it.
  std::vector<const TraceEvent*> slices = EventsOf(trace, 2, 'X');
  ASSERT_EQ(slices.size(), 2u);
  EXPECT_EQ(slices[0]->name, "python3 (pid 77, rtprio 50)");
  EXPECT_EQ(trace.info.kernel_overwritten, 3u);
}

// Some kernels (this VM's 6.18) record no switch out of the idle task: a
// task seen leaving a CPU that was idle ran since its wakeup there.
TEST(SchedTracksTest, AStartNoSwitchRecordedIsItsWakeup) {
  SchedText sched;
  sched.events = {
      Switch(1, 1200, kPing, "S", kIdle1),
      Wakeup(1, 2000, kPing),
      Switch(1, 2100, kPing, "S", kIdle1),
      Switch(1, 3000, kPython, "S", kIdle1),
  };
  Trace trace = LoopTrace();
  AddSchedTracks(sched, 0, {9}, &trace);
  std::vector<const TraceEvent*> slices = EventsOf(trace, 2, 'X');
  ASSERT_EQ(slices.size(), 3u);
  // Before the first switch: since the recording's start, cut at the window.
  EXPECT_EQ(slices[0]->ts_ns, 1000);
  EXPECT_EQ(slices[0]->dur_ns, 200);
  EXPECT_EQ(Arg(*slices[0], "inferred_start"), 1);
  EXPECT_EQ(slices[1]->name, "ping (pid 9, rtprio 5)");
  EXPECT_EQ(slices[1]->ts_ns, 2000);
  EXPECT_EQ(slices[1]->dur_ns, 100);
  EXPECT_EQ(Arg(*slices[1], "inferred_start"), 1);
  // No wakeup of python3 seen: since the CPU's last switch.
  EXPECT_EQ(slices[2]->name, "python3 (pid 77, rtprio 50)");
  EXPECT_EQ(slices[2]->ts_ns, 2100);
  EXPECT_EQ(slices[2]->dur_ns, 900);
}

TEST(SchedTracksTest, NothingRecordedStillSaysSo) {
  Trace trace = LoopTrace();
  AddSchedTracks(SchedText{}, 0, {9}, &trace);
  EXPECT_TRUE(trace.info.kernel_sched);
  EXPECT_EQ(trace.info.kernel_events, 0u);
  EXPECT_EQ(EventsOf(trace, 2, 'M').size(), 1u);
}

}  // namespace
}  // namespace aos::tracing
