#include "aos/events/timing_report_accumulator.h"

#include "aos/events/timing_report_format.h"
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

TEST(TimingReportAccumulatorTest, AccumulatesExactlyPerApplication) {
  TimingReportAccumulator accumulator;
  accumulator.Add(DecodedFromJson(PingReport(kPingStart, kPingEnd)));
  accumulator.Add(
      DecodedFromJson(PingReport(kPingEnd, kPingEnd + 1'000'000'000)));
  const auto summaries = accumulator.Summaries();
  ASSERT_EQ(summaries.size(), 1u);
  const timing::ReportContents& summary = summaries[0];
  EXPECT_EQ(summary.header.monotonic_start_ns, kPingStart);
  EXPECT_EQ(summary.header.monotonic_end_ns, kPingEnd + 1'000'000'000);
  EXPECT_EQ(summary.timers[0].count, 200u);
  EXPECT_EQ(summary.timers[0].missed_cycles, 4u);
  EXPECT_EQ(summary.senders[0].count, 200u);
  EXPECT_FLOAT_EQ(summary.timers[0].wakeup_latency.statistic().max(),
                  0.000100601f);
  EXPECT_FLOAT_EQ(summary.timers[0].wakeup_latency.statistic().average(),
                  2.66082e-05f);
  const timing::LatencyHistogram& histogram =
      summary.watchers[0].wakeup_latency.histogram();
  EXPECT_EQ(histogram.count(), 200u);
  EXPECT_EQ(histogram.bucket_count(266), 100u);
  EXPECT_EQ(histogram.min_ns(), 5397);
  EXPECT_EQ(accumulator.reports(), 2);
  EXPECT_THAT(FormatTimingReportAos(summary, PingPongChannels().message()),
              HasSubstr("Window: 2 sec, until 634529.158294370sec"));
  // The summary encodes and decodes to itself.
  const flatbuffers::DetachedBuffer encoded =
      timing::EncodeReportContents(summary);
  auto decoded = timing::DecodeTimingReport({encoded.data(), encoded.size()});
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(decoded->timers[0].count, 200u);
  EXPECT_EQ(decoded->watchers[0].wakeup_latency.histogram(), histogram);
}

TEST(TimingReportAccumulatorTest, SeparateProcessesAndNewEntriesStaySeparate) {
  TimingReportAccumulator accumulator;
  accumulator.Add(DecodedFromJson(PingReport(kPingStart, kPingEnd)));
  timing::ReportContents other_pid =
      DecodedFromJson(PingReport(kPingStart, kPingEnd));
  other_pid.header.pid = 7;
  accumulator.Add(other_pid);
  timing::ReportContents more =
      DecodedFromJson(PingReport(kPingStart, kPingEnd));
  more.timers[0].name = "pong";
  accumulator.Add(more);
  const auto summaries = accumulator.Summaries();
  ASSERT_EQ(summaries.size(), 2u);
  EXPECT_EQ(summaries[0].header.pid, 7);  // Ordered by name, then pid.
  ASSERT_EQ(summaries[1].timers.size(), 2u);
  EXPECT_EQ(summaries[1].timers[0].name, "ping");
  EXPECT_EQ(summaries[1].timers[1].name, "pong");
  EXPECT_EQ(summaries[1].watchers[0].count, 200u);
}

// The summary keeps the latest report's CPU latency limit.
TEST(TimingReportAccumulatorTest, CpuLatencyLimitIsTheLatest) {
  TimingReportAccumulator accumulator;
  accumulator.Add(DecodedFromJson(PingReport(
      kPingEnd, kPingEnd + 1'000'000'000,
      R"("cpu_latency_limit_us": 20, "cpu_latency_limit_cpus": "1-2",)")));
  accumulator.Add(DecodedFromJson(PingReport(
      kPingStart, kPingEnd,
      R"("cpu_latency_limit_us": 0, "cpu_latency_limit_cpus": "all",)")));
  const timing::ReportHeader& header = accumulator.Summaries()[0].header;
  EXPECT_EQ(header.cpu_latency_limit_us, 20);
  EXPECT_EQ(header.cpu_latency_limit_cpus, "1-2");
  EXPECT_EQ(header.monotonic_start_ns, kPingStart);
}

// Busy-poll time and catches add up over windows; the window and the idle
// poller's CPUs are the latest report's.
TEST(TimingReportAccumulatorTest, BusyPollAddsUp) {
  TimingReportAccumulator accumulator;
  accumulator.Add(DecodedFromJson(PingReport(
      kPingEnd, kPingEnd + 1'000'000'000,
      R"("busy_poll_us": 50, "busy_poll_time": 1000, "busy_poll_wakeups": 2,
         "idle_poll_cpus": "1", "timer_anticipation_lead": 40000,
         "timer_anticipation_auto": true, "timer_anticipation_time": 700,
         "timer_wakeups": 10, "timer_wakeups_early": 8,)")));
  accumulator.Add(DecodedFromJson(PingReport(
      kPingStart, kPingEnd,
      R"("busy_poll_us": 20, "busy_poll_time": 500, "busy_poll_wakeups": 3,
         "timer_anticipation_lead": 90000, "timer_anticipation_time": 300,
         "timer_wakeups": 5, "timer_wakeups_early": 1,)")));
  const timing::ReportHeader& header = accumulator.Summaries()[0].header;
  EXPECT_EQ(header.busy_poll_us, 50);
  EXPECT_EQ(header.busy_poll_ns, 1500u);
  EXPECT_EQ(header.busy_poll_wakeups, 5u);
  EXPECT_EQ(header.idle_poll_cpus, "1");
  // So does timer anticipation: its lead is the latest report's.
  EXPECT_EQ(header.timer_anticipation_lead_ns, 40000);
  EXPECT_TRUE(header.timer_anticipation_auto);
  EXPECT_EQ(header.timer_anticipation_ns, 1000u);
  EXPECT_EQ(header.timer_wakeups, 15u);
  EXPECT_EQ(header.timer_wakeups_early, 9u);
}

TEST(TimingReportAccumulatorTest, AWindowWithoutSamplesDoesNotPoisonTheSum) {
  TimingReportAccumulator accumulator;
  accumulator.Add(DecodedFromJson(
      R"({ "name": "ping", "pid": 1, "timers": [ { "name": "timing_reports",
      "count": 1, "handler_time": { "average": nan, "min": nan, "max": nan,
                                    "standard_deviation": nan } } ] })"));
  accumulator.Add(DecodedFromJson(
      R"({ "name": "ping", "pid": 1, "timers": [ { "name": "timing_reports",
      "count": 1, "handler_time": { "average": 2e-05, "min": 2e-05, "max": 2e-05,
                                    "standard_deviation": 0 } } ] })"));
  const timing::RunningStatistic& handler =
      accumulator.Summaries()[0].timers[0].handler_time.statistic();
  EXPECT_EQ(handler.count(), 1u);
  EXPECT_FLOAT_EQ(handler.average(), 2e-05f);
  EXPECT_FLOAT_EQ(handler.max(), 2e-05f);
}

}  // namespace
}  // namespace aos
