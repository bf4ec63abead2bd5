// latency_bench's readers of our programs' JSON: on output captured from
// the real programs (testdata/), and on the programs run here, whose files
// must also satisfy a strict reader.
#include "tools/bench/bench_inputs.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "aos/testing/path.h"
#include "aos/util/str_cat.h"
#include "aos/util/subprocess.h"
#include "glog/logging.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aos::bench {
namespace {

using ::testing::HasSubstr;

JsonDocument Testdata(std::string_view file) {
  auto json = JsonDocument::ReadFile(
      testing::ArtifactPath(StrCat("tools/bench/testdata/", file)));
  CHECK(json.ok()) << json.status().message();
  return std::move(json).value();
}

TEST(ReadPingSummaryTest, ReadsTheRoundTrip) {
  // ping --priority=0 --sleep_ms=10 --summary_json=..., with pong, for 1 s.
  auto round_trip = ReadPingSummary(Testdata("ping_summary.json").root());
  ASSERT_TRUE(round_trip.ok()) << round_trip.status().message();
  EXPECT_DOUBLE_EQ(round_trip->avg_us, 70.57787);
  EXPECT_DOUBLE_EQ(round_trip->p50_us, 68.607);
}

TEST(ReadPingSummaryTest, NoAnswerIsNan) {
  auto json = JsonDocument::Parse(
      R"({ "pings": 3, "pongs": 0, "out_of_order": 0, "round_trip_us":
           { "avg": null, "p50": null, "p99": null, "max": null } })",
      "unanswered.json");
  ASSERT_TRUE(json.ok());
  auto round_trip = ReadPingSummary(json->root());
  ASSERT_TRUE(round_trip.ok()) << round_trip.status().message();
  EXPECT_TRUE(std::isnan(round_trip->avg_us));
}

TEST(MicrobenchmarkNsTest, ReadsRealTimeInNanoseconds) {
  // timing_benchmark --benchmark_filter='^(BM_RecordBoth|BM_SteadyClockNow)$'
  //   --benchmark_format=json
  const JsonDocument timing = Testdata("timing_benchmark.json");
  auto record = MicrobenchmarkNs(timing.root(), "BM_RecordBoth");
  ASSERT_TRUE(record.ok()) << record.status().message();
  EXPECT_NEAR(*record, 8.64, 0.01);
  auto clock = MicrobenchmarkNs(timing.root(), "BM_SteadyClockNow");
  ASSERT_TRUE(clock.ok()) << clock.status().message();
  EXPECT_NEAR(*clock, 26.34, 0.01);
  // timing_report_benchmark --benchmark_filter='^BM_BuildReport50Entries$'
  auto report =
      MicrobenchmarkNs(Testdata("timing_report_benchmark.json").root(),
                       "BM_BuildReport50Entries");
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_NEAR(*report, 7386.12, 0.01);
}

TEST(MicrobenchmarkNsTest, OtherUnitsAreConvertedAndUnknownOnesNamed) {
  auto json = JsonDocument::Parse(
      R"({ "benchmarks": [
           { "name": "BM_A", "real_time": 2.5, "time_unit": "us" },
           { "name": "BM_B", "real_time": 1, "time_unit": "fortnight" } ] })",
      "units.json");
  ASSERT_TRUE(json.ok());
  EXPECT_DOUBLE_EQ(*MicrobenchmarkNs(json->root(), "BM_A"), 2500);
  EXPECT_EQ(MicrobenchmarkNs(json->root(), "BM_B").status().message(),
            "units.json: benchmarks[1].time_unit is \"fortnight\", not ns, "
            "us, ms or s");
  EXPECT_EQ(MicrobenchmarkNs(json->root(), "BM_C").status().message(),
            "units.json: no benchmark named BM_C in benchmarks");
}

TEST(ReadShmWakeupRowTest, ReadsARowOfFigures) {
  // shm_wakeup_benchmark --loops=20 --run_timer_driven=false
  //   --run_floor=false --run_tools=false --json=...
  const JsonDocument json = Testdata("shm_wakeup_benchmark.json");
  auto row = ReadShmWakeupRow(json.root(), "ping_pong");
  ASSERT_TRUE(row.ok()) << row.status().message();
  EXPECT_EQ(row->name, "aos ShmEventLoop, sigwaittest's ping-pong");
  EXPECT_EQ(row->count, 20);
  EXPECT_DOUBLE_EQ(row->p99_us, 37.907);
  uint64_t in_classes = 0;
  for (const auto& [bin, count] : row->bins) in_classes += count;
  EXPECT_EQ(in_classes, 20u);
  EXPECT_EQ(ReadShmWakeupRow(json.root(), "floor").status().message(),
            StrCat(json.root().source(), ": rows.floor is missing"));
}

// The programs themselves, at normal priority, briefly. Nothing here
// depends on how fast the machine is.
class LiveOutputTest : public ::testing::Test {
 protected:
  // Python's json module, refusing NaN and Infinity, accepts `path`.
  void ExpectStrictJson(const std::string& path) {
    constexpr const char* kPython = "/usr/bin/python3";
    if (access(kPython, X_OK) != 0) {
      std::cout << "not checked with a strict reader: no " << kPython << "\n";
      return;
    }
    Subprocess python(kPython,
                      {"-c",
                       "import json, sys\n"
                       "def refuse(c): raise ValueError(c)\n"
                       "json.load(open(sys.argv[1]), parse_constant=refuse)\n",
                       path},
                      dir_);
    EXPECT_EQ(python.Wait(), 0) << path << ": " << python.Stderr();
  }

  std::string dir_ = testing::TestTempDir();
};

TEST_F(LiveOutputTest, PingWritesItsSummaryAsJson) {
  char base[] = "/dev/shm/aos_bench_inputs_XXXXXX";
  ASSERT_NE(mkdtemp(base), nullptr);
  const std::vector<std::string> common = {
      "--config=" + testing::ArtifactPath("examples/pingpong_config.json"),
      StrCat("--shm_base=", base), "--priority=0"};
  std::vector<std::string> pong_args = common;
  Subprocess pong(testing::ArtifactPath("examples/pong"), pong_args, dir_);
  std::vector<std::string> ping_args = common;
  const std::string summary = dir_ + "/summary.json";
  // 20 pings, then ping exits by itself once the last is answered (or a
  // second later, if pong was not watching yet): no signal that could
  // arrive before ping's loop blocks it.
  ping_args.push_back("--count=20");
  ping_args.push_back("--sleep_ms=5");
  ping_args.push_back("--summary_json=" + summary);
  Subprocess ping(testing::ArtifactPath("examples/ping"), ping_args, dir_);
  EXPECT_EQ(ping.Wait(), 0) << ping.Stderr();
  EXPECT_THAT(ping.Stdout(), HasSubstr(" pings, ")) << "the line stays";
  auto json = JsonDocument::ReadFile(summary);
  ASSERT_TRUE(json.ok()) << json.status().message();
  const auto pings = json->root()["pings"].Integer();
  const auto pongs = json->root()["pongs"].Integer();
  ASSERT_TRUE(pings.ok() && pongs.ok());
  EXPECT_EQ(*pings, 20);
  EXPECT_LE(*pongs, *pings);
  // An answer means pong's loop runs, and so takes SIGTERM as a request to
  // stop; without one, pong may not have got that far, and SIGTERM's
  // default action is all there is to see.
  const int pong_status = pong.Terminate();
  if (*pongs > 0) {
    EXPECT_EQ(pong_status, 0) << pong.Stderr();
  }
  std::filesystem::remove_all(base);
  auto round_trip = ReadPingSummary(json->root());
  ASSERT_TRUE(round_trip.ok()) << round_trip.status().message();
  EXPECT_EQ(std::isnan(round_trip->avg_us), *pongs == 0);
  ExpectStrictJson(summary);
}

TEST_F(LiveOutputTest, PingNamesASummaryFileItCannotWrite) {
  Subprocess ping(testing::ArtifactPath("examples/ping"),
                  {"--summary_json=/nonexistent/summary.json"}, dir_);
  EXPECT_EQ(ping.Wait(), 1);
  EXPECT_THAT(ping.Stderr(),
              HasSubstr("ping: --summary_json=/nonexistent/summary.json: "
                        "cannot open for writing"));
}

TEST_F(LiveOutputTest, MicrobenchmarksHandOverJson) {
  Subprocess run(testing::ArtifactPath("tools/bench/timing_benchmark"),
                 {"--benchmark_filter=^BM_SteadyClockNow$",
                  "--benchmark_min_time=0.01", "--benchmark_format=json"},
                 dir_);
  ASSERT_EQ(run.Wait(), 0) << run.Stderr();
  auto json = JsonDocument::Parse(run.Stdout(), "timing_benchmark's output");
  ASSERT_TRUE(json.ok()) << json.status().message();
  auto ns = MicrobenchmarkNs(json->root(), "BM_SteadyClockNow");
  ASSERT_TRUE(ns.ok()) << ns.status().message();
  EXPECT_GT(*ns, 0);
}

TEST_F(LiveOutputTest, ShmWakeupBenchmarkWritesItsRowsAsJson) {
  const std::string path = dir_ + "/wakeup.json";
  Subprocess run(testing::ArtifactPath("tools/bench/shm_wakeup_benchmark"),
                 {"--loops=20", "--priority=0", "--run_timer_driven=false",
                  "--run_floor=false", "--run_tools=false", "--json=" + path},
                 dir_);
  ASSERT_EQ(run.Wait(), 0) << run.Stderr();
  auto json = JsonDocument::ReadFile(path);
  ASSERT_TRUE(json.ok()) << json.status().message();
  auto row = ReadShmWakeupRow(json->root(), "ping_pong");
  ASSERT_TRUE(row.ok()) << row.status().message();
  EXPECT_EQ(row->count, 20);
  EXPECT_LE(row->min_us, row->max_us);
  ExpectStrictJson(path);
}

TEST_F(LiveOutputTest, ShmWakeupBenchmarkNamesAJsonFileItCannotWrite) {
  Subprocess run(testing::ArtifactPath("tools/bench/shm_wakeup_benchmark"),
                 {"--json=/nonexistent/wakeup.json"}, dir_);
  EXPECT_EQ(run.Wait(), 1);
  EXPECT_THAT(run.Stderr(),
              HasSubstr("--json=/nonexistent/wakeup.json: cannot open"));
  EXPECT_EQ(run.Stdout(), "") << "nothing was measured";
}

}  // namespace
}  // namespace aos::bench
