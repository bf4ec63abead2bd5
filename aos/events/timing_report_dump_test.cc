#include "aos/events/timing_report_dump.h"

#include "aos/configuration.h"
#include "aos/events/event_loop_bfbs_generated.h"
#include "aos/events/streamed_report_bfbs_generated.h"
#include "aos/json_to_flatbuffer.h"
#include "aos/util/str_cat.h"
#include "glog/logging.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aos {
namespace {

using ::testing::HasSubstr;

flatbuffers::DetachedBuffer Report(std::string_view json) {
  auto buffer = JsonToFlatbuffer(
      json, *reflection::GetSchema(timing::ReportBinarySchema::data()));
  EXPECT_TRUE(buffer.ok()) << buffer.status().message();
  return std::move(buffer).value();
}

FlatbufferDetachedBuffer<Configuration> Config() {
  auto config = configuration::ReadConfigFromJson(R"({ "channels": [
      { "name": "/aos", "type": "aos.timing.Report", "max_size": 16384 },
      { "name": "/test", "type": "aos.examples.Ping" },
      { "name": "/test", "type": "aos.examples.Pong" } ] })");
  CHECK(config.ok()) << config.status().message();
  return std::move(config).value();
}

// One window of ping: 100 timer calls, 100 Pongs watched, 100 Pings sent.
// 5397 ns falls in bucket 266 of layout 1, 102438 ns in bucket 402.
std::string PingReport(int64_t start, int64_t end,
                       std::string_view more_fields = "") {
  return StrCat(R"({
  "name": "ping", "pid": 3885755, "version": "ping_version", "node": "",)",
                more_fields, R"(
  "monotonic_start_time": )",
                start, R"(, "monotonic_end_time": )", end, R"(,
  "realtime_start_time": 1740078734089194802,
  "watchers": [ { "channel_index": 2, "count": 100,
    "wakeup_latency": { "average": 3.67391e-05, "min": 5.397e-06, "max": 0.000102438,
                        "standard_deviation": 2.65956e-05 },
    "handler_time": { "average": 7.9988e-07, "min": 1.28e-07, "max": 1.6e-06,
                      "standard_deviation": 3.5626e-07 },
    "wakeup_latency_histogram": { "layout": 1, "min_ns": 5397, "max_ns": 102438,
      "buckets": [ { "index": 266, "count": 50 }, { "index": 402, "count": 50 } ] } } ],
  "senders": [ { "channel_index": 1, "count": 100,
    "size": { "average": 32, "min": 32, "max": 32, "standard_deviation": 0 },
    "error_counts": [ { "error": "MESSAGE_SENT_TOO_FAST", "count": 0 },
                      { "error": "INVALID_REDZONE", "count": 0 } ] } ],
  "timers": [ { "name": "ping", "count": 100, "missed_cycles": 2,
    "wakeup_latency": { "average": 2.66082e-05, "min": 4.693e-06, "max": 0.000100601,
                        "standard_deviation": 2.49382e-05 },
    "handler_time": { "average": 1.15897e-05, "min": 2.809e-06, "max": 2.626e-05,
                      "standard_deviation": 5.1843e-06 } } ] })");
}

const std::string kPing = PingReport(634527158294370, 634528158294370);

TEST(TimingReportDumpTest, FormatsLikeAosWithPercentilesAndMissedCycles) {
  const auto config = Config();
  const auto report = Report(kPing);
  EXPECT_EQ(
      FormatTimingReport(*flatbuffers::GetRoot<timing::Report>(report.data()),
                         config.message()),
      R"(ping[3885755] () version: "ping_version" (634527.158294370sec,2025-02-20_19-12-14.089194802):
  Window: 1 sec, until 634528.158294370sec; CPU wakeup limit: none
  Watchers (1):
    Channel Name |              Type | Count |                                       Wakeup Latency |       p50 |         p99 |                                  Handler Time | p50 | p99 | Lost
           /test | aos.examples.Pong |   100 | 3.67391e-05 [5.397e-06, 0.000102438] std 2.65956e-05 | 5.439e-06 | 0.000102438 | 7.9988e-07 [1.28e-07, 1.6e-06] std 3.5626e-07 |   - |   - |    0
  Senders (1):
    Channel Name |              Type | Count |              Size | Errors
           /test | aos.examples.Ping |   100 | 32 [32, 32] std 0 |   0, 0
  Timers (1):
    Name | Count |                                       Wakeup Latency | p50 | p99 |                                      Handler Time | p50 | p99 | Missed
    ping |   100 | 2.66082e-05 [4.693e-06, 0.000100601] std 2.49382e-05 |   - |   - | 1.15897e-05 [2.809e-06, 2.626e-05] std 5.1843e-06 |   - |   - |      2
)");
}

TEST(TimingReportDumpTest, AccumulatesExactlyPerApplication) {
  const auto first = Report(kPing);
  const auto second = Report(PingReport(634528158294370, 634529158294370));
  TimingReportAccumulator accumulator;
  ASSERT_TRUE(accumulator.Add({first.data(), first.size()}).ok());
  ASSERT_TRUE(accumulator.Add({second.data(), second.size()}).ok());
  const auto summaries = accumulator.Summaries();
  ASSERT_EQ(summaries.size(), 1u);
  const timing::Report& summary = summaries[0].message();
  EXPECT_EQ(summary.monotonic_start_time(), 634527158294370);
  EXPECT_EQ(summary.monotonic_end_time(), 634529158294370);
  EXPECT_EQ(summary.timers()->Get(0)->count(), 200u);
  EXPECT_EQ(summary.timers()->Get(0)->missed_cycles(), 4u);
  EXPECT_EQ(summary.senders()->Get(0)->count(), 200u);
  EXPECT_FLOAT_EQ(summary.timers()->Get(0)->wakeup_latency()->max(),
                  0.000100601f);
  EXPECT_FLOAT_EQ(summary.timers()->Get(0)->wakeup_latency()->average(),
                  2.66082e-05f);
  const timing::Histogram* histogram =
      summary.watchers()->Get(0)->wakeup_latency_histogram();
  ASSERT_NE(histogram, nullptr);
  ASSERT_EQ(histogram->buckets()->size(), 2u);
  EXPECT_EQ(histogram->buckets()->Get(0)->count(), 100u);
  EXPECT_EQ(histogram->min_ns(), 5397);
  EXPECT_THAT(FormatTimingReport(summary, Config().message()),
              HasSubstr("Window: 2 sec, until 634529.158294370sec"));
}

// Which CPU latency limit the loop held is said in the header, and the
// summary keeps the latest one.
TEST(TimingReportDumpTest, CpuLatencyLimitIsShownAndAccumulated) {
  const auto all = Report(PingReport(
      634527158294370, 634528158294370,
      R"("cpu_latency_limit_us": 0, "cpu_latency_limit_cpus": "all",)"));
  const auto pinned = Report(PingReport(
      634528158294370, 634529158294370,
      R"("cpu_latency_limit_us": 20, "cpu_latency_limit_cpus": "1-2",)"));
  EXPECT_THAT(
      FormatTimingReport(*flatbuffers::GetRoot<timing::Report>(all.data()),
                         Config().message()),
      HasSubstr("634528.158294370sec; CPU wakeup limit: 0 us, all CPUs\n"));
  TimingReportAccumulator accumulator;
  ASSERT_TRUE(accumulator.Add({pinned.data(), pinned.size()}).ok());
  ASSERT_TRUE(accumulator.Add({all.data(), all.size()}).ok());
  const auto summaries = accumulator.Summaries();
  ASSERT_EQ(summaries.size(), 1u);
  EXPECT_EQ(summaries[0].message().cpu_latency_limit_us(), 20);
  EXPECT_THAT(FormatTimingReport(summaries[0].message(), Config().message()),
              HasSubstr("; CPU wakeup limit: 20 us, CPUs 1-2\n"));
}

TEST(TimingReportDumpTest, AWindowWithoutSamplesDoesNotPoisonTheSum) {
  const auto empty = Report(
      R"({ "name": "ping", "pid": 1, "timers": [ { "name": "timing_reports",
      "count": 1, "handler_time": { "average": nan, "min": nan, "max": nan,
                                    "standard_deviation": nan } } ] })");
  const auto full = Report(
      R"({ "name": "ping", "pid": 1, "timers": [ { "name": "timing_reports",
      "count": 1, "handler_time": { "average": 2e-05, "min": 2e-05, "max": 2e-05,
                                    "standard_deviation": 0 } } ] })");
  TimingReportAccumulator accumulator;
  ASSERT_TRUE(accumulator.Add({empty.data(), empty.size()}).ok());
  ASSERT_TRUE(accumulator.Add({full.data(), full.size()}).ok());
  const timing::Statistic* handler =
      accumulator.Summaries()[0].message().timers()->Get(0)->handler_time();
  EXPECT_FLOAT_EQ(handler->average(), 2e-05f);
  EXPECT_FLOAT_EQ(handler->max(), 2e-05f);
}

TEST(TimingReportDumpTest, JsonLinesCarryTheReportAndItsPercentiles) {
  const auto report = Report(kPing);
  const std::string line = TimingReportToJsonLine(
      *flatbuffers::GetRoot<timing::Report>(report.data()), Config().message(),
      true);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_THAT(line, HasSubstr("\"accumulated\": true"));
  EXPECT_THAT(line, HasSubstr("\"name\": \"ping\", \"pid\": 3885755"));
  EXPECT_THAT(
      line,
      HasSubstr(
          "{ \"kind\": \"watcher\", \"name\": \"/test\", \"type\": "
          "\"aos.examples.Pong\", \"wakeup_latency\": { \"p50_ns\": 5439, "
          "\"p90_ns\": 102438, \"p99_ns\": 102438, \"p999_ns\": 102438, "
          "\"max_ns\": 102438 } }"));
  // And it reads back with the same schema.
  auto parsed = JsonToFlatbuffer(
      line, *reflection::GetSchema(timing::StreamedReportBinarySchema::data()));
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(flatbuffers::GetRoot<timing::StreamedReport>(parsed->data())
                ->report()
                ->pid(),
            3885755);
}

TEST(TimingReportDumpTest, GnuplotTableAndWorstWakeup) {
  const auto report = Report(kPing);
  TimingReportAccumulator accumulator;
  ASSERT_TRUE(accumulator.Add({report.data(), report.size()}).ok());
  const auto summaries = accumulator.Summaries();
  const std::string table =
      HistogramsAsGnuplotTable(summaries, Config().message());
  EXPECT_THAT(table, HasSubstr("# ping[3885755] watcher /test wakeup_latency\n"
                               "5.376 5.504 50\n102.4 104.448 50\n"));
  const WorstWakeup worst = FindWorstWakeup(summaries, Config().message());
  EXPECT_EQ(worst.what, "ping[3885755] watcher /test");
  EXPECT_NEAR(worst.max_us, 102.438, 1e-3);
}

TEST(TimingReportDumpTest, MalformedReportsAreRefusedAndChangeNothing) {
  TimingReportAccumulator accumulator;
  const auto good = Report(kPing);
  ASSERT_TRUE(accumulator.Add({good.data(), good.size()}).ok());

  std::vector<uint8_t> truncated(good.data(), good.data() + good.size() / 2);
  EXPECT_THAT(accumulator.Add(truncated).message(),
              HasSubstr("not a valid aos.timing.Report"));

  std::string bad_histogram(kPing);
  bad_histogram.replace(bad_histogram.find("\"index\": 402"), 12,
                        "\"index\": 4000");
  const auto bad = Report(bad_histogram);
  EXPECT_THAT(accumulator.Add({bad.data(), bad.size()}).message(),
              HasSubstr("timing report of ping: watcher of channel 2"));
  EXPECT_EQ(accumulator.reports(), 1);
  EXPECT_EQ(accumulator.Summaries()[0].message().timers()->Get(0)->count(),
            100u);
}

}  // namespace
}  // namespace aos
