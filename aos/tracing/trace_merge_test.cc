#include "aos/tracing/trace_merge.h"

#include <fstream>

#include "aos/tracing/chrome_trace_reader.h"
#include "aos/tracing/trace_test_events.h"
#include "gtest/gtest.h"

namespace aos::tracing {
namespace {

// A node's snapshot: a loop (pid 1) whose watcher ran 5 us at `run_ns`, a
// flow into it, and the kernel's CPUs (pid 2).
Trace NodeTrace(std::string node, std::string loop, int64_t run_ns) {
  Trace trace;
  trace.info.node = node;
  trace.info.reason = "ping: wakeup latency";
  trace.info.trigger_ns = 1'000'000;
  trace.window = TraceWindow{0, 2'000'000};
  trace.torn = 1;
  TraceEvent run = Event('X', "watcher /test", 1, 2, run_ns);
  run.dur_ns = 5'000;
  run.args = {{"queue_index", 7}, {"sent_ns", run_ns - 100}};
  TraceEvent from = Event('s', "flow", 1, 1, run_ns - 100);
  from.id = 1;
  TraceEvent to = Event('f', "flow", 1, 2, run_ns);
  to.id = 1;
  trace.events = {
      Metadata("process_name", 1, 0, node + " " + loop + " (pid 9)"),
      Metadata("process_name", 2, 0, "kernel: CPUs"),
      Metadata("thread_name", 2, 2, "CPU 1"),
      run,
      from,
      to,
      Event('i', "wakeup " + loop, 2, 2, run_ns - 50)};
  return trace;
}

Trace RoundTrip(const Trace& trace, std::string_view name) {
  const std::string path = TempPath(name);
  std::ofstream(path) << TraceJson(trace);
  absl::StatusOr<Trace> read = ReadTrace(path);
  EXPECT_TRUE(read.ok()) << read.status();
  return read.ok() ? *read : Trace{};
}

TEST(TraceMergeTest, ReadsBackWhatItWrote) {
  Trace pi2 = NodeTrace("pi2", "pong", 1'000'500);
  pi2.info.requested_by = "pi1";
  pi2.info.requester_trigger_ns = 1'000'000;
  pi2.info.clock_offset_ns = -300;
  pi2.info.clock_offset_uncertainty_ns = 40;
  const Trace read = RoundTrip(pi2, "pi2.json");
  EXPECT_EQ(TraceJson(read), TraceJson(pi2));
}

TEST(TraceMergeTest, MovesAskedNodesOntoTheAskingNodesClock) {
  const Trace pi1 = RoundTrip(NodeTrace("pi1", "ping", 1'000'000), "pi1.json");
  Trace asked = NodeTrace("pi2", "pong", 1'000'500);
  asked.info.requested_by = "pi1";
  asked.info.requester_trigger_ns = 1'000'000;
  asked.info.clock_offset_ns = -300;
  asked.info.clock_offset_uncertainty_ns = 40;
  const Trace pi2 = RoundTrip(asked, "pi2.json");

  absl::StatusOr<Trace> merged = MergeTraces({pi1, pi2});
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(merged->info.node, "pi1");
  EXPECT_EQ(merged->info.trigger_ns, 1'000'000);
  EXPECT_EQ(merged->torn, 2u);
  EXPECT_EQ(
      merged->info.merged,
      (std::vector<std::string>{
          "pi1: its clock", "pi2: clock offset -300 ns (uncertainty 40 ns)"}));
  ASSERT_EQ(merged->events.size(), 14u);
  // pi1's as they were.
  EXPECT_EQ(merged->events[3].pid, 1);
  EXPECT_EQ(merged->events[3].ts_ns, 1'000'000);
  EXPECT_EQ(merged->events[1].text_arg, "pi1 kernel: CPUs");
  // pi2's: new processes, flows, and pi1's clock (pi2's + offset).
  const TraceEvent& pong_name = merged->events[7];
  EXPECT_EQ(pong_name.pid, 3);
  EXPECT_EQ(pong_name.text_arg, "pi2 pong (pid 9)");
  EXPECT_EQ(merged->events[8].pid, 4);
  EXPECT_EQ(merged->events[8].text_arg, "pi2 kernel: CPUs");
  const TraceEvent& pong_run = merged->events[10];
  EXPECT_EQ(pong_run.pid, 3);
  EXPECT_EQ(pong_run.ts_ns, 1'000'200);
  EXPECT_EQ(pong_run.dur_ns, 5'000);
  EXPECT_EQ(merged->events[11].id, 2u);
  EXPECT_EQ(merged->events[12].id, 2u);
  EXPECT_EQ(merged->events[4].id, 1u);
}

// A watcher on pi2 that got a message pi1 sent (its remote queue index and
// send time are the send's): a flow from pi1's send to it.
TEST(TraceMergeTest, DrawsFlowsFromASendToTheWatcherOnTheOtherNode) {
  Trace pi1 = NodeTrace("pi1", "ping", 1'000'000);
  TraceEvent send = Event('i', "send /test", 1, 1, 999'000);
  send.args = {{"queue_index", 42}};
  pi1.events.push_back(send);
  Trace pi2 = NodeTrace("pi2", "pong", 1'000'500);
  pi2.info.requested_by = "pi1";
  pi2.info.requester_trigger_ns = 1'000'000;
  pi2.info.clock_offset_ns = -300;
  pi2.events[3].args.emplace_back("remote_queue_index", 42);
  pi2.events[3].args.emplace_back("remote_sent_ns", 999'000);
  absl::StatusOr<Trace> merged = MergeTraces(
      {RoundTrip(pi1, "flow_pi1.json"), RoundTrip(pi2, "flow_pi2.json")});
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(merged->info.cross_node_flows, 1u);
  ASSERT_GE(merged->events.size(), 2u);
  const TraceEvent& begin = merged->events[merged->events.size() - 2];
  const TraceEvent& end = merged->events.back();
  EXPECT_EQ(begin.phase, 's');
  EXPECT_EQ(begin.pid, 1);
  EXPECT_EQ(begin.ts_ns, 999'000);
  EXPECT_EQ(end.phase, 'f');
  EXPECT_EQ(end.pid, 3);
  EXPECT_EQ(end.ts_ns, 1'000'200);
  EXPECT_EQ(end.id, begin.id);
  // Ids not used by either node's own flows (1 and 2).
  EXPECT_EQ(begin.id, 3u);
  EXPECT_NE(TraceJson(*merged).find("\"cross_node_flows\": 1"),
            std::string::npos);
}

TEST(TraceMergeTest, RefusesSnapshotsOfAnotherTrigger) {
  const Trace pi1 = NodeTrace("pi1", "ping", 1'000'000);
  Trace other = NodeTrace("pi2", "pong", 1'000'500);
  other.info.requested_by = "pi1";
  other.info.requester_trigger_ns = 7;
  absl::StatusOr<Trace> merged = MergeTraces({pi1, other});
  ASSERT_FALSE(merged.ok());
  EXPECT_NE(merged.status().message().find("was not asked for by pi1"),
            std::string::npos)
      << merged.status();
  // The asked node's first: refused too.
  other.info.requester_trigger_ns = 1'000'000;
  EXPECT_FALSE(MergeTraces({other, pi1}).ok());
  EXPECT_FALSE(MergeTraces({}).ok());
}

TEST(TraceMergeTest, NamesWhatIsMissing) {
  const std::string path = TempPath("bad.json");
  std::ofstream(path)
      << R"({"traceEvents": [{"ph": "X"}], "otherData": {)"
      << R"("reason": "x", "trigger_ns": 1, "window_begin_ns": 0,)"
      << R"("window_end_ns": 1, "suppressed_snapshots": 0,)"
      << R"("torn_events": 0}})";
  absl::StatusOr<Trace> read = ReadTrace(path);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find(path), std::string::npos)
      << read.status();
  EXPECT_NE(read.status().message().find("name"), std::string::npos)
      << read.status();
}

}  // namespace
}  // namespace aos::tracing
