#include "aos/events/timing_report_format.h"

#include "aos/events/streamed_report_bfbs_generated.h"
#include "aos/events/streamed_report_generated.h"
#include "aos/events/timing_report_test_data.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aos {
namespace {

using ::aos::testing::DecodedFromJson;
using ::aos::testing::kPingEnd;
using ::aos::testing::kPingStart;
using ::aos::testing::PingPongChannels;
using ::aos::testing::PingReport;
using ::testing::HasSubstr;

TEST(TimingReportFormatTest, FormatsLikeAosWithPercentilesAndMissedCycles) {
  EXPECT_EQ(
      FormatTimingReport(DecodedFromJson(PingReport(kPingStart, kPingEnd)),
                         PingPongChannels().message()),
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

TEST(TimingReportFormatTest, CpuLatencyLimitIsShown) {
  const Configuration& config = PingPongChannels().message();
  EXPECT_THAT(
      FormatTimingReport(
          DecodedFromJson(PingReport(
              kPingStart, kPingEnd,
              R"("cpu_latency_limit_us": 0, "cpu_latency_limit_cpus": "all",)")),
          config),
      HasSubstr("634528.158294370sec; CPU wakeup limit: 0 us, all CPUs\n"));
  EXPECT_THAT(
      FormatTimingReport(
          DecodedFromJson(PingReport(
              kPingStart, kPingEnd,
              R"("cpu_latency_limit_us": 20, "cpu_latency_limit_cpus": "1-2",)")),
          config),
      HasSubstr("; CPU wakeup limit: 20 us, CPUs 1-2\n"));
}

TEST(TimingReportFormatTest, JsonLinesCarryTheReportAndItsPercentiles) {
  const std::string line =
      TimingReportToJsonLine(DecodedFromJson(PingReport(kPingStart, kPingEnd)),
                             PingPongChannels().message(), true);
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
  const timing::Report* report =
      flatbuffers::GetRoot<timing::StreamedReport>(parsed->data())->report();
  EXPECT_EQ(report->pid(), 3885755);
  EXPECT_EQ(report->timers()->Get(0)->missed_cycles(), 2u);
}

TEST(TimingReportFormatTest, GnuplotTableAndWorstWakeup) {
  const std::vector<timing::ReportContents> reports = {
      DecodedFromJson(PingReport(kPingStart, kPingEnd))};
  const Configuration& config = PingPongChannels().message();
  EXPECT_THAT(HistogramsAsGnuplotTable(reports, config),
              HasSubstr("# ping[3885755] watcher /test wakeup_latency\n"
                        "5.376 5.504 50\n102.4 104.448 50\n"));
  const WorstWakeup worst = FindWorstWakeup(reports, config);
  EXPECT_EQ(worst.what, "ping[3885755] watcher /test");
  EXPECT_NEAR(worst.max_us, 102.438, 1e-3);
}

TEST(TimingReportFormatTest, UnknownChannelsAreNamedByIndex) {
  timing::ReportContents report =
      DecodedFromJson(PingReport(kPingStart, kPingEnd));
  report.watchers[0].channel_index = 17;
  EXPECT_THAT(FormatTimingReport(report, PingPongChannels().message()),
              HasSubstr("<channel 17?> |    ? |   100 |"));
}

}  // namespace
}  // namespace aos
