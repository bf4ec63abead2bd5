#include "aos/events/timing_report_codec.h"

#include "aos/events/timing_report_test_data.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace aos::timing {
namespace {

using ::aos::testing::kPingEnd;
using ::aos::testing::kPingStart;
using ::aos::testing::PingReport;
using ::aos::testing::ReportFromJson;
using ::testing::HasSubstr;

TEST(TimingReportCodecTest, DecodesEveryFigure) {
  const auto bytes = ReportFromJson(
      PingReport(kPingStart, kPingEnd,
                 R"("cpu_latency_limit_us": 0, "cpu_latency_limit_cpus": "all",
         "send_failures": 3, "dropped_histograms": 4, "dropped_entries": 5,
         "busy_poll_us": 50, "busy_poll_time": 123456, "busy_poll_wakeups": 7,
         "idle_poll_cpus": "0-1", "timer_anticipation_lead": 61500,
         "timer_anticipation_auto": true, "timer_anticipation_time": 98765,
         "timer_wakeups": 11, "timer_wakeups_early": 9,)"));
  auto report = DecodeTimingReport({bytes.data(), bytes.size()});
  ASSERT_TRUE(report.ok()) << report.status().message();
  const ReportHeader& header = report->header;
  EXPECT_EQ(header.name, "ping");
  EXPECT_EQ(header.pid, 3885755);
  EXPECT_EQ(header.version, "ping_version");
  EXPECT_EQ(header.monotonic_start_ns, kPingStart);
  EXPECT_EQ(header.monotonic_end_ns, kPingEnd);
  EXPECT_EQ(header.realtime_start_ns, 1740078734089194802);
  EXPECT_EQ(header.send_failures, 3u);
  EXPECT_EQ(header.dropped_histograms, 4u);
  EXPECT_EQ(header.dropped_entries, 5u);
  EXPECT_EQ(header.cpu_latency_limit_us, 0);
  EXPECT_EQ(header.cpu_latency_limit_cpus, "all");
  EXPECT_EQ(header.busy_poll_us, 50);
  EXPECT_EQ(header.busy_poll_ns, 123456u);
  EXPECT_EQ(header.busy_poll_wakeups, 7u);
  EXPECT_EQ(header.idle_poll_cpus, "0-1");
  EXPECT_EQ(header.timer_anticipation_lead_ns, 61500);
  EXPECT_TRUE(header.timer_anticipation_auto);
  EXPECT_EQ(header.timer_anticipation_ns, 98765u);
  EXPECT_EQ(header.timer_wakeups, 11u);
  EXPECT_EQ(header.timer_wakeups_early, 9u);
  ASSERT_EQ(report->watchers.size(), 1u);
  const WatcherTiming& watcher = report->watchers[0];
  EXPECT_EQ(watcher.channel_index, 2);
  EXPECT_EQ(watcher.count, 100u);
  EXPECT_EQ(watcher.wakeup_latency.statistic().count(), 100u);
  EXPECT_FLOAT_EQ(watcher.wakeup_latency.statistic().standard_deviation(),
                  2.65956e-05f);
  EXPECT_EQ(watcher.wakeup_latency.histogram().count(), 100u);
  EXPECT_EQ(watcher.handler_time.histogram().count(), 0u);  // Not carried.
  ASSERT_EQ(report->senders.size(), 1u);
  EXPECT_EQ(report->senders[0].size.average(), 32);
  ASSERT_EQ(report->timers.size(), 1u);
  EXPECT_EQ(report->timers[0].name, "ping");
  EXPECT_EQ(report->timers[0].missed_cycles, 2u);
  EXPECT_TRUE(report->fetchers.empty());
  EXPECT_TRUE(report->phased_loops.empty());
}

TEST(TimingReportCodecTest, EncodingAndDecodingRoundTrip) {
  const auto bytes = ReportFromJson(PingReport(kPingStart, kPingEnd));
  auto first = DecodeTimingReport({bytes.data(), bytes.size()});
  ASSERT_TRUE(first.ok());
  const flatbuffers::DetachedBuffer encoded = EncodeReportContents(*first);
  auto second = DecodeTimingReport({encoded.data(), encoded.size()});
  ASSERT_TRUE(second.ok()) << second.status().message();
  const Report& a = *flatbuffers::GetRoot<Report>(bytes.data());
  const Report& b = *flatbuffers::GetRoot<Report>(encoded.data());
  // The statistics survive bit for bit, through double and back to float.
  EXPECT_EQ(a.watchers()->Get(0)->wakeup_latency()->standard_deviation(),
            b.watchers()->Get(0)->wakeup_latency()->standard_deviation());
  EXPECT_EQ(a.timers()->Get(0)->handler_time()->average(),
            b.timers()->Get(0)->handler_time()->average());
  EXPECT_EQ(second->watchers[0].wakeup_latency.histogram(),
            first->watchers[0].wakeup_latency.histogram());
  EXPECT_EQ(b.senders()->Get(0)->error_counts()->size(), kSendErrorCount);
}

// What a loop met in its shared memory reaches the tools and back.
TEST(TimingReportCodecTest, SharedMemoryDamageRoundTrips) {
  const auto bytes = ReportFromJson(R"({ "name": "pong",
      "reopened_queue_files": 2,
      "senders": [ { "channel_index": 1, "count": 4, "refused_wakeups": 7,
                     "impossible_sent_times": 3 } ] })");
  auto first = DecodeTimingReport({bytes.data(), bytes.size()});
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(first->header.reopened_queue_files, 2u);
  ASSERT_EQ(first->senders.size(), 1u);
  EXPECT_EQ(first->senders[0].refused_wakeups, 7u);
  EXPECT_EQ(first->senders[0].impossible_sent_times, 3u);
  const flatbuffers::DetachedBuffer encoded = EncodeReportContents(*first);
  auto second = DecodeTimingReport({encoded.data(), encoded.size()});
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_EQ(second->header.reopened_queue_files, 2u);
  EXPECT_EQ(second->senders[0].refused_wakeups, 7u);
  EXPECT_EQ(second->senders[0].impossible_sent_times, 3u);
  SenderTiming sum = first->senders[0];
  sum.Merge(second->senders[0]);
  EXPECT_EQ(sum.refused_wakeups, 14u);
  EXPECT_EQ(sum.impossible_sent_times, 6u);
  sum.Reset();
  EXPECT_EQ(sum.refused_wakeups + sum.impossible_sent_times, 0u);
}

// Path latency (docs/timing_reports.md): ages per origin and hops, the
// origins senders passed on, and each timer's id as an origin, there and
// back; the size bounds hold for what is encoded.
TEST(TimingReportCodecTest, PathsRoundTripWithinTheirSizeBounds) {
  ReportContents contents;
  contents.header.name = "pong";
  TimerTiming& timer = contents.timers.emplace_back();
  timer.name = "sensor";
  timer.origin_id = 0x12345678;
  WatcherTiming& watcher = contents.watchers.emplace_back();
  watcher.channel_index = 2;
  watcher.count = 3;
  watcher.paths.set_deadline(std::chrono::milliseconds(2));
  PathOrigins origins;
  origins.Add({.id = 0x12345678,
               .hops = 2,
               .uncertainty_us = 40,
               .monotonic_time_ns = 1000000});
  origins.Add({.id = 77, .hops = 1, .monotonic_time_ns = 2000000});
  watcher.paths.Record(
      origins, monotonic_clock::time_point(std::chrono::nanoseconds(3500000)));
  watcher.paths.CountInvalid(5);
  FetcherTiming& fetcher = contents.fetchers.emplace_back();
  fetcher.channel_index = 1;
  fetcher.paths.Record(
      origins, monotonic_clock::time_point(std::chrono::nanoseconds(2500000)));
  SenderTiming& sender = contents.senders.emplace_back();
  sender.channel_index = 3;
  sender.sent_origins.Record(origins.NextHop());
  sender.sent_origins.AddDropped(4);

  flatbuffers::FlatBufferBuilder fbb;
  fbb.ForceDefaults(true);
  fbb.Finish(EncodeTimer(&fbb, timer, true));
  EXPECT_LE(fbb.GetSize(), TimerSizeBound(timer, true));
  fbb.Clear();
  fbb.Finish(EncodeWatcher(&fbb, watcher, true));
  EXPECT_LE(fbb.GetSize(), WatcherSizeBound(watcher, true));
  fbb.Clear();
  fbb.Finish(EncodeFetcher(&fbb, fetcher, true));
  EXPECT_LE(fbb.GetSize(), FetcherSizeBound(fetcher, true));
  fbb.Clear();
  fbb.Finish(EncodeSender(&fbb, sender));
  EXPECT_LE(fbb.GetSize(), SenderSizeBound());

  const flatbuffers::DetachedBuffer encoded = EncodeReportContents(contents);
  auto decoded = DecodeTimingReport({encoded.data(), encoded.size()});
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(decoded->timers[0].origin_id, 0x12345678u);
  const PathTimings& paths = decoded->watchers[0].paths;
  ASSERT_EQ(paths.size(), 2u);
  EXPECT_EQ(paths.deadline_ns(), 2000000);
  EXPECT_EQ(paths.invalid_origins(), 5u);
  const PathTiming& first = paths.begin()[0];
  EXPECT_EQ(first.origin_id, 0x12345678u);
  EXPECT_EQ(first.hops, 2u);
  EXPECT_EQ(first.count(), 1u);
  EXPECT_EQ(first.deadline_overruns, 1u);  // 2.5 ms > 2 ms.
  EXPECT_EQ(first.max_uncertainty_ns, 40000);
  EXPECT_EQ(first.age.histogram().max_ns(), 2500000);
  EXPECT_FLOAT_EQ(first.age.statistic().max(), 2.5e-3);
  EXPECT_EQ(paths.begin()[1].deadline_overruns, 0u);  // 1.5 ms.
  EXPECT_EQ(decoded->fetchers[0].paths.size(), 2u);
  EXPECT_EQ(decoded->fetchers[0].paths.deadline_ns(), -1);
  const SentOrigins& sent = decoded->senders[0].sent_origins;
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent.begin()[0].hops, 3u);
  EXPECT_EQ(sent.begin()[0].count, 1u);
  EXPECT_EQ(sent.dropped(), 4u);
}

TEST(TimingReportCodecTest, MalformedReportsAreRefusedNamingWhatIsWrong) {
  const auto good = ReportFromJson(PingReport(kPingStart, kPingEnd));
  std::vector<uint8_t> truncated(good.data(), good.data() + good.size() / 2);
  EXPECT_THAT(std::string(DecodeTimingReport(truncated).status().message()),
              HasSubstr("not a valid aos.timing.Report"));

  std::string bad_histogram = PingReport(kPingStart, kPingEnd);
  bad_histogram.replace(bad_histogram.find("\"index\": 402"), 12,
                        "\"index\": 4000");
  const auto bad = ReportFromJson(bad_histogram);
  EXPECT_THAT(
      std::string(
          DecodeTimingReport({bad.data(), bad.size()}).status().message()),
      HasSubstr("timing report of ping: watcher of channel 2: histogram "));

  const auto nameless = ReportFromJson(R"({ "pid": 1 })");
  EXPECT_EQ(
      DecodeTimingReport({nameless.data(), nameless.size()}).status().message(),
      "timing report without a name");

  // A window that ends before it starts, or one too long for an int64_t of
  // ns (found by the fuzzer: formatting its length overflowed).
  for (const auto& [start, end] :
       {std::pair<int64_t, int64_t>{kPingEnd, kPingStart},
        std::pair<int64_t, int64_t>{INT64_MIN + 5, kPingEnd}}) {
    const auto backwards = ReportFromJson(PingReport(start, end));
    EXPECT_THAT(
        std::string(DecodeTimingReport({backwards.data(), backwards.size()})
                        .status()
                        .message()),
        HasSubstr("timing report of ping: its window ends"));
  }
}

TEST(TimingReportCodecTest, UnknownSendErrorsAreIgnored) {
  const auto bytes = ReportFromJson(R"({ "name": "x", "senders": [
      { "channel_index": 0, "count": 1,
        "error_counts": [ { "error": "INVALID_REDZONE", "count": 2 },
                          { "error": 9, "count": 5 } ] } ] })");
  auto report = DecodeTimingReport({bytes.data(), bytes.size()});
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->senders[0].error_counts[1], 2u);
  EXPECT_EQ(report->senders[0].error_counts[0], 0u);
}

}  // namespace
}  // namespace aos::timing
