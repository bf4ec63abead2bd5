#include "aos/tracing/timeline_plot.h"

#include <cmath>
#include <fstream>
#include <limits>

#include "aos/tracing/chrome_trace.h"
#include "aos/tracing/trace_test_events.h"
#include "gtest/gtest.h"

namespace aos::tracing {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// Ping (pid 1) late behind a python3 on CPU 1 (the kernel, pid 2), trigger
// at 10 ms, window [0, 12 ms].
std::string WriteSnapshot() {
  Trace trace;
  trace.window = TraceWindow{0, 12'000'000};
  trace.info.reason = "ping: wakeup latency";
  trace.info.trigger_ns = 10'000'000;
  trace.events = {
      Metadata("process_name", 2, 0, "kernel: CPUs"),
      Metadata("thread_name", 2, 2, "CPU 1"),
      Metadata("process_name", 1, 0, "ping (pid 9)"),
      Metadata("thread_name", 1, 3, "timer ping"),
      Metadata("thread_name", 1, 0, "loop"),
      Event('X', "python3 (pid 77, rtprio 50)", 2, 2, 1'000'000, 9'000'000),
      Event('X', "timer ping", 1, 3, 10'000'000, 20'000),
      Event('X', "ping (pid 9, rtprio 5)", 2, 2, 10'000'000, 30'000),
      Event('i', "send /test", 1, 3, 10'010'000),
      Event('s', "flow", 1, 3, 10'010'000),
  };
  trace.events[5].args = {{"pid", 77}};
  trace.events[7].args = {{"pid", 9}};
  const std::string path = TempPath("snapshot.json");
  std::ofstream(path) << TraceJson(trace);
  return path;
}

TEST(TimelinePlotTest, ReadsTracksInProcessAndTrackOrder) {
  absl::StatusOr<Timeline> timeline = ReadTimeline(WriteSnapshot());
  ASSERT_TRUE(timeline.ok()) << timeline.status();
  // Only tracks with something on them; pid then tid.
  EXPECT_EQ(timeline->rows,
            (std::vector<std::string>{"ping (pid 9): timer ping",
                                      "kernel: CPUs: CPU 1"}));
  EXPECT_EQ(timeline->row_process, (std::vector<int>{0, 1}));
  EXPECT_EQ(timeline->reason, "ping: wakeup latency");
  EXPECT_DOUBLE_EQ(timeline->zero_us, 10'000);
  EXPECT_DOUBLE_EQ(timeline->window_end_us, 12'000);
  ASSERT_EQ(timeline->bars.size(), 3u);
  EXPECT_EQ(timeline->bars[0].row, 1);
  EXPECT_EQ(timeline->bars[0].name, "python3 (pid 77, rtprio 50)");
  EXPECT_DOUBLE_EQ(timeline->bars[0].begin_us, 1'000);
  EXPECT_DOUBLE_EQ(timeline->bars[0].end_us, 10'000);
  // Another task: grey; ping's thread on the CPU: ping's colour.
  EXPECT_EQ(timeline->bars[0].process, -1);
  EXPECT_EQ(timeline->bars[1].row, 0);
  EXPECT_EQ(timeline->bars[1].process, 0);
  EXPECT_EQ(timeline->bars[2].row, 1);
  EXPECT_EQ(timeline->bars[2].process, 0);
  // Flows are not drawn; the send is a mark.
  ASSERT_EQ(timeline->marks.size(), 1u);
  EXPECT_EQ(timeline->marks[0].row, 0);
  EXPECT_DOUBLE_EQ(timeline->marks[0].at_us, 10'010);
}

TEST(TimelinePlotTest, ScriptDrawsTheRangeAskedAndQuotesNames) {
  absl::StatusOr<Timeline> timeline = ReadTimeline(WriteSnapshot());
  ASSERT_TRUE(timeline.ok()) << timeline.status();
  timeline->rows[0] = "it's\nbad";
  timeline->bars[0].name = "a \"b\"";
  const std::string script = TimelineScript(*timeline, "/x/t.png", -5, 1);
  EXPECT_NE(script.find("set xrange [-5:1]"), std::string::npos) << script;
  EXPECT_NE(script.find("'it\"s?bad' 2"), std::string::npos) << script;
  EXPECT_NE(script.find("'kernel: CPUs: CPU 1' 1"), std::string::npos);
  // python3 from -9 to 0 ms shows from -5 on: named inside, in the middle.
  EXPECT_NE(script.find("-2.5 1 \"a 'b'\""), std::string::npos) << script;
  EXPECT_NE(script.find("set arrow from 0, graph 0"), std::string::npos);
  // The whole window unless told.
  EXPECT_NE(TimelineScript(*timeline, "/x/t.png", kNan, kNan)
                .find("set xrange [-10:2]"),
            std::string::npos);
}

TEST(TimelinePlotTest, DrawsAPng) {
  if (!std::ifstream("/usr/bin/gnuplot").good()) {
    GTEST_SKIP() << "gnuplot is not installed (tools/aos.sh install does it)";
  }
  absl::StatusOr<Timeline> timeline = ReadTimeline(WriteSnapshot());
  ASSERT_TRUE(timeline.ok()) << timeline.status();
  const std::string png = TempPath("timeline.png");
  const absl::Status status = WriteTimelinePlot(*timeline, png, kNan, kNan);
  ASSERT_TRUE(status.ok()) << status;
  std::ifstream file(png, std::ios::binary);
  char magic[8] = {};
  file.read(magic, sizeof(magic));
  EXPECT_EQ(std::string(magic + 1, 3), "PNG");
}

TEST(TimelinePlotTest, NamesWhatIsNotASnapshot) {
  const std::string path = TempPath("not_a_snapshot.json");
  std::ofstream(path) << "{\"traceEvents\": []}";
  absl::StatusOr<Timeline> timeline = ReadTimeline(path);
  ASSERT_FALSE(timeline.ok());
  EXPECT_NE(timeline.status().message().find(path), std::string::npos)
      << timeline.status();
  EXPECT_NE(timeline.status().message().find("otherData"), std::string::npos)
      << timeline.status();
  EXPECT_FALSE(ReadTimeline(TempPath("missing.json")).ok());
}

}  // namespace
}  // namespace aos::tracing
