#include "aos/events/timing_report_format.h"

#include "aos/events/streamed_report_bfbs_generated.h"
#include "aos/events/streamed_report_generated.h"
#include "aos/events/timing_report_accumulator.h"
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
using ::testing::Not;

TEST(TimingReportFormatTest, FormatsLikeAosWithPercentilesAndMissedCycles) {
  EXPECT_EQ(
      FormatTimingReportAos(DecodedFromJson(PingReport(kPingStart, kPingEnd)),
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

TEST(TimingReportFormatTest, CsvHasOneRowPerEntryWithAHeader) {
  const std::string csv =
      TimingReportToCsvRows(DecodedFromJson(PingReport(kPingStart, kPingEnd)),
                            PingPongChannels().message());
  const std::string header = TimingReportCsvHeader();
  EXPECT_EQ(header,
            "time_s,node,application,pid,kind,name,count,avg_us,p50_us,p99_us,"
            "max_us,missed_or_lost\n");
  // Every row has the header's 12 fields and ends its line.
  size_t rows = 0;
  for (size_t start = 0; start < csv.size();) {
    const size_t end = csv.find('\n', start);
    ASSERT_NE(end, std::string::npos);
    const std::string line = csv.substr(start, end - start);
    EXPECT_EQ(std::count(line.begin(), line.end(), ','), 11) << line;
    // time_s, no node, application, pid.
    EXPECT_THAT(line, ::testing::ContainsRegex("^[0-9.e+]+,,ping,3885755,"));
    start = end + 1;
    ++rows;
  }
  EXPECT_GE(rows, 3u);
  // A timer row names it; a watcher row names its channel and type; a
  // sender row has no latencies.
  EXPECT_THAT(csv, ::testing::ContainsRegex(",timer,ping,[0-9]+,[0-9.e+-]+,"));
  EXPECT_THAT(csv, HasSubstr(",watcher,/test aos.examples.Pong,"));
  EXPECT_THAT(csv, ::testing::ContainsRegex(",sender,[^,]+,[0-9]+,,,,,0\n"));
}

TEST(TimingReportFormatTest, DurationsHaveThreeSignificantDigits) {
  EXPECT_EQ(FormatDuration(5397, TimeUnit::kMicroseconds), "5.40");
  EXPECT_EQ(FormatDuration(26608.2, TimeUnit::kMicroseconds), "26.6");
  EXPECT_EQ(FormatDuration(102438, TimeUnit::kMicroseconds), "102");
  EXPECT_EQ(FormatDuration(1450000, TimeUnit::kMicroseconds), "1450");
  EXPECT_EQ(FormatDuration(800, TimeUnit::kMicroseconds), "0.800");
  // Reports from elsewhere may carry any float.
  EXPECT_EQ(FormatDuration(INFINITY, TimeUnit::kMicroseconds), "inf");
  EXPECT_EQ(FormatDuration(-INFINITY, TimeUnit::kMicroseconds), "-inf");
  EXPECT_EQ(FormatDuration(1.7e308, TimeUnit::kNanoseconds), "1.7e+308");
  EXPECT_EQ(FormatDuration(5397, TimeUnit::kNanoseconds), "5397");
  EXPECT_EQ(FormatDuration(5397, TimeUnit::kMilliseconds), "0.00540");
  EXPECT_EQ(FormatDuration(0, TimeUnit::kMicroseconds), "0");
  EXPECT_EQ(FormatDuration(999.96, TimeUnit::kMicroseconds), "1.00");
  EXPECT_EQ(FormatDuration(99960, TimeUnit::kMicroseconds), "100");
  EXPECT_EQ(FormatDuration(-2500, TimeUnit::kMicroseconds), "-2.50");
  EXPECT_EQ(FormatDuration(NAN, TimeUnit::kMicroseconds), "-");
  TimeUnit unit;
  ASSERT_TRUE(ParseTimeUnit("ms", &unit));
  EXPECT_EQ(unit, TimeUnit::kMilliseconds);
  EXPECT_FALSE(ParseTimeUnit("s", &unit));
}

TEST(TimingReportFormatTest, TableForPeopleNamesChannelsAndFits120Columns) {
  const std::string table =
      FormatTimingTable(DecodedFromJson(PingReport(kPingStart, kPingEnd)),
                        PingPongChannels().message(), TimeUnit::kMicroseconds);
  EXPECT_EQ(
      table,
      R"(ping[3885755] version "ping_version": window of 1.00 s ending 19:12:15.089 UTC; CPU wakeup limit: none
  wakeup latency and handler time in us
  callback                         count   min   avg   p50  p99  p99.9  max  hdl p50  hdl max  missed/lost
  timer ping                         100  4.69  26.6     -    -      -  101        -     26.3            2
  watcher /test aos.examples.Pong    100  5.40  36.7  5.44  102    102  102        -     1.60            0
  sender /test aos.examples.Ping: 100 sent, 32 B avg, no errors
)");
  for (size_t start = 0; start < table.size();) {
    const size_t end = table.find('\n', start);
    EXPECT_LE(end - start, 120u) << table.substr(start, end - start);
    start = end + 1;
  }
}

// A timer that did nothing in the window (ping's stop timer) is named,
// not a row of dashes; one that only missed cycles keeps its row.
TEST(TimingReportFormatTest, TimersThatDidNotRunAreNamedNotRows) {
  timing::ReportContents report =
      DecodedFromJson(PingReport(kPingStart, kPingEnd));
  timing::TimerTiming idle;
  idle.name = "stop: --count/--duration";
  report.timers.insert(report.timers.begin(), idle);
  timing::TimerTiming stalled;
  stalled.name = "stalled";
  stalled.missed_cycles = 3;
  report.timers.push_back(stalled);
  const std::string table = FormatTimingTable(
      report, PingPongChannels().message(), TimeUnit::kMicroseconds);
  EXPECT_THAT(table, Not(HasSubstr("  timer stop: --count/--duration    ")));
  EXPECT_THAT(table, HasSubstr("  timer stalled "));
  EXPECT_THAT(table, HasSubstr("\n  not run in this window: timer stop: "
                               "--count/--duration\n"));
  // AOS's layout keeps every row.
  EXPECT_THAT(FormatTimingReportAos(report, PingPongChannels().message()),
              HasSubstr("stop: --count/--duration |     0"));
}

// Without a realtime start the window's end is its monotonic time.
TEST(TimingReportFormatTest, HeaderWithoutRealtimeSaysMonotonic) {
  timing::ReportContents report =
      DecodedFromJson(PingReport(kPingStart, kPingEnd));
  report.header.realtime_start_ns = 0;
  report.header.version.clear();
  const std::string table = FormatTimingTable(
      report, PingPongChannels().message(), TimeUnit::kMicroseconds);
  EXPECT_THAT(table,
              ::testing::StartsWith("ping[3885755]: window of 1.00 s ending at "
                                    "634528.158 s on its monotonic clock; "));
}

TEST(TimingReportFormatTest, TableUnitsAndLongNames) {
  timing::ReportContents report =
      DecodedFromJson(PingReport(kPingStart, kPingEnd));
  report.timers[0].name = std::string(60, 'x');
  const std::string table = FormatTimingTable(
      report, PingPongChannels().message(), TimeUnit::kNanoseconds);
  EXPECT_THAT(table, HasSubstr("handler time in ns"));
  EXPECT_THAT(table, HasSubstr("  timer xxxxxxxxxx...xxxxxxxxxxxxxxx    100"));
  EXPECT_THAT(table, HasSubstr("  5397  36739  5439  102438  102438  102438"));
}

// Damage a loop met in shared memory shows only when there was some.
TEST(TimingReportFormatTest, SharedMemoryDamageIsShownWhenThereIsAny) {
  const auto channels = PingPongChannels();
  const Configuration& config = channels.message();
  timing::ReportContents report =
      DecodedFromJson(PingReport(kPingStart, kPingEnd));
  const std::string clean =
      FormatTimingTable(report, config, TimeUnit::kMicroseconds);
  EXPECT_THAT(clean, ::testing::Not(HasSubstr("damaged")));
  EXPECT_THAT(clean, ::testing::Not(HasSubstr("re-opened")));
  report.senders[0].refused_wakeups = 5;
  report.senders[0].impossible_sent_times = 1;
  report.header.reopened_queue_files = 1;
  const std::string table =
      FormatTimingTable(report, config, TimeUnit::kMicroseconds);
  EXPECT_THAT(table,
              HasSubstr("  sender /test aos.examples.Ping: 100 sent, 32 B avg, "
                        "no errors; shared memory damaged: 5 wakeups refused "
                        "(forged or stale watcher registrations), 1 "
                        "impossible sent times\n"));
  EXPECT_THAT(table, HasSubstr("  queue files deleted or replaced under it, "
                               "re-opened: 1\n"));
  EXPECT_THAT(FormatTimingReportAos(report, config),
              HasSubstr("  Sender /test; shared memory damaged: 5 wakeups"));
}

// Names come from whoever sent the report: escape sequences and NULs never
// reach the terminal.
TEST(TimingReportFormatTest, HostileNamesAreEscaped) {
  const auto channels = PingPongChannels();
  timing::ReportContents report =
      DecodedFromJson(PingReport(kPingStart, kPingEnd));
  report.header.name = std::string("pi\x1b[2Jng\0", 10);
  report.header.version = "v\n1";
  report.timers[0].name = "t\x07";
  for (const std::string& text :
       {FormatTimingTable(report, channels.message(), TimeUnit::kMicroseconds),
        FormatTimingReportAos(report, channels.message())}) {
    EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
    EXPECT_EQ(text.find('\x07'), std::string::npos) << text;
    EXPECT_EQ(text.find(std::string(1, '\0')), std::string::npos) << text;
    EXPECT_THAT(text, HasSubstr("\\x1b[2Jng\\x00"));
  }
}

TEST(TimingReportFormatTest, CpuLatencyLimitIsShown) {
  const Configuration& config = PingPongChannels().message();
  EXPECT_THAT(
      FormatTimingReportAos(
          DecodedFromJson(PingReport(
              kPingStart, kPingEnd,
              R"("cpu_latency_limit_us": 0, "cpu_latency_limit_cpus": "all",)")),
          config),
      HasSubstr("634528.158294370sec; CPU wakeup limit: 0 us, all CPUs\n"));
  EXPECT_THAT(
      FormatTimingReportAos(
          DecodedFromJson(PingReport(
              kPingStart, kPingEnd,
              R"("cpu_latency_limit_us": 20, "cpu_latency_limit_cpus": "1-2",)")),
          config),
      HasSubstr("; CPU wakeup limit: 20 us, CPUs 1-2\n"));
}

// How the loop kept its wakeups off halted CPUs, where it did.
TEST(TimingReportFormatTest, WakeupPollingIsShown) {
  const Configuration& config = PingPongChannels().message();
  // kPingStart to kPingEnd is one second: 250 ms polling is 25 %.
  EXPECT_THAT(
      FormatTimingReportAos(
          DecodedFromJson(
              PingReport(kPingStart, kPingEnd,
                         R"("busy_poll_us": 50, "busy_poll_time": 250000000,
                 "busy_poll_wakeups": 12, "idle_poll_cpus": "0-1",)")),
          config),
      HasSubstr("; CPU wakeup limit: none; busy poll 50 us: 25 % of the "
                "time polling, 12 wakeups caught; idle poller on CPUs 0-1\n"));
}

// How early the loop armed its timers, and what that cost and won.
TEST(TimingReportFormatTest, TimerAnticipationIsShown) {
  const Configuration& config = PingPongChannels().message();
  // 2 ms spinning in a one-second window: 0.2 %.
  EXPECT_THAT(
      FormatTimingReportAos(
          DecodedFromJson(PingReport(
              kPingStart, kPingEnd,
              R"("timer_anticipation_lead": 73500, "timer_anticipation_auto":
                 true, "timer_anticipation_time": 2000000, "timer_wakeups":
                 102, "timer_wakeups_early": 76,)")),
          config),
      HasSubstr("; CPU wakeup limit: none; timers armed 73.5 us early (auto): "
                "0.2 % of the time spinning, 76 of 102 timer wakeups "
                "early\n"));
  // A share too small for three decimals, never in scientific notation.
  EXPECT_THAT(
      FormatTimingReportAos(
          DecodedFromJson(PingReport(
              kPingStart, kPingEnd,
              R"("timer_anticipation_lead": 2000, "timer_anticipation_time":
                 5, "timer_wakeups": 3, "timer_wakeups_early": 1,)")),
          config),
      HasSubstr("; timers armed 2 us early: < 0.001 % of the time spinning, "
                "1 of 3 timer wakeups early\n"));
  // None: nothing said.
  EXPECT_THAT(FormatTimingReportAos(
                  DecodedFromJson(PingReport(kPingStart, kPingEnd)), config),
              Not(HasSubstr("armed")));
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
              HasSubstr("# ping[3885755] watcher /test aos.examples.Pong "
                        "wakeup_latency\n"
                        "5.376 5.504 50\n102.4 104.448 50\n"));
  const WorstWakeup worst = FindWorstWakeup(reports, config);
  EXPECT_EQ(worst.what, "ping[3885755] watcher /test");
  EXPECT_NEAR(worst.max_us, 102.438, 1e-3);
}

TEST(TimingReportFormatTest, UnknownChannelsAreNamedByIndex) {
  timing::ReportContents report =
      DecodedFromJson(PingReport(kPingStart, kPingEnd));
  report.watchers[0].channel_index = 17;
  EXPECT_THAT(FormatTimingReportAos(report, PingPongChannels().message()),
              HasSubstr("<channel 17?> |    ? |   100 |"));
}

// The paths of a report: a section after its rows, each path's route
// pieced together from every loop's reports.
class PathsFormatTest : public ::testing::Test {
 protected:
  PathsFormatTest()
      : reports_(paths_.reports()), directory_(paths_.directory()) {}
  const Configuration& config() const { return paths_.config(); }

  // Gives pong's watcher a second path, from origin 77 on another node
  // (hop 1, translated with an uncertainty of 12 us), aged 800 us.
  timing::WatcherTiming& AddRemotePathToPong() {
    timing::WatcherTiming& watcher = reports_.pong.watchers[0];
    PathOrigins remote;
    remote.Add(
        {.id = 77, .hops = 1, .uncertainty_us = 12, .monotonic_time_ns = 0});
    watcher.paths.Record(
        remote, monotonic_clock::time_point(std::chrono::microseconds(800)));
    return watcher;
  }

  testing::PingPongPaths paths_;
  testing::PingPongPathReports& reports_;
  const PathDirectory& directory_;
};

TEST_F(PathsFormatTest, TableHasAPathsSectionWithRoutes) {
  const std::string table = FormatTimingTable(
      reports_.ping, config(), TimeUnit::kMicroseconds, &directory_);
  EXPECT_THAT(
      table,
      HasSubstr(
          "  sender /test aos.examples.Ping: 100 sent, 32 B avg, no errors\n"
          "  paths: age of the data at callback start (callback start - "
          "origin time) in us\n"
          "    hops  count   p50   p99   max  deadline  overruns  route\n"
          "       2    100  1008  2982  3000      2000        50  ping timer "
          "\"ping\" → /test aos.examples.Ping → pong → /test "
          "aos.examples.Pong → ping watcher\n"));
  EXPECT_THAT(
      FormatTimingTable(reports_.pong, config(), TimeUnit::kMilliseconds,
                        &directory_),
      HasSubstr("in ms\n"
                "    hops  count    p50    p99    max  route\n"
                "       1    100  0.500  0.500  0.500  ping timer \"ping\" → "
                "/test aos.examples.Ping → pong watcher\n"));
  // Without a directory: the origin's id and the hops.
  EXPECT_THAT(
      FormatTimingTable(reports_.pong, config(), TimeUnit::kMicroseconds),
      HasSubstr(
          StrCat("  500  ", UnresolvedPath(reports_.origin_id, 1), "\n")));
  // No paths, no section: the table is what it always was.
  EXPECT_EQ(FormatTimingTable(DecodedFromJson(PingReport(kPingStart, kPingEnd)),
                              config(), TimeUnit::kMicroseconds, &directory_),
            FormatTimingTable(DecodedFromJson(PingReport(kPingStart, kPingEnd)),
                              config(), TimeUnit::kMicroseconds));
}

TEST_F(PathsFormatTest, UncertaintyDroppedSamplesAndInvalidOrigins) {
  AddRemotePathToPong().paths.AddDecodedCounts(3, 2);
  const std::string table = FormatTimingTable(
      reports_.pong, config(), TimeUnit::kMicroseconds, &directory_);
  EXPECT_THAT(table, HasSubstr("    hops  count  p50  p99  max      ±  route\n"
                               "       1    100  500  500  500      -  ping"));
  EXPECT_THAT(table,
              HasSubstr("       1      1  800  800  800  ±12.0  origin "
                        "0x0000004d (no report seen) → /test "
                        "aos.examples.Ping → pong watcher\n"
                        "  watcher /test aos.examples.Ping: 3 path samples "
                        "dropped (more paths than 4), 2 invalid origins "
                        "(damaged or forged)\n"));
}

TEST_F(PathsFormatTest, JsonLinesCarryEachPathsUncertainty) {
  AddRemotePathToPong();
  const std::string line =
      TimingReportToJsonLine(reports_.pong, config(), true, &directory_);
  auto parsed = JsonToFlatbuffer(
      line, *reflection::GetSchema(timing::StreamedReportBinarySchema::data()));
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  const timing::EntryPercentiles* entry =
      flatbuffers::GetRoot<timing::StreamedReport>(parsed->data())
          ->percentiles()
          ->Get(0);
  ASSERT_NE(entry->paths(), nullptr);
  ASSERT_EQ(entry->paths()->size(), 2u);
  // The local origin's path, then the remote one's.
  EXPECT_EQ(entry->paths()->Get(0)->max_uncertainty_ns(), 0);
  EXPECT_EQ(entry->paths()->Get(1)->origin_id(), 77u);
  EXPECT_EQ(entry->paths()->Get(1)->max_uncertainty_ns(), 12000);
}

// --format=aos is AOS's layout, exactly: paths are not in it.
TEST_F(PathsFormatTest, AosLayoutHasNoPaths) {
  EXPECT_EQ(FormatTimingReportAos(reports_.ping, config()),
            FormatTimingReportAos(
                DecodedFromJson(PingReport(kPingStart, kPingEnd)), config()));
}

TEST_F(PathsFormatTest, CsvHasARowPerPath) {
  const std::string csv =
      TimingReportToCsvRows(reports_.ping, config(), &directory_);
  EXPECT_THAT(csv,
              HasSubstr(",path,\"ping timer \"\"ping\"\" → /test "
                        "aos.examples.Ping → pong → /test aos.examples.Pong "
                        "→ ping watcher\",100,2000,1007.62,2981.89,3000,50\n"));
  EXPECT_THAT(TimingReportToCsvRows(reports_.ping, config()),
              HasSubstr(StrCat(",path,", UnresolvedPath(reports_.origin_id, 2),
                               ",100,")));
}

TEST_F(PathsFormatTest, JsonLinesHaveEachPathsPercentilesAndRoute) {
  const std::string line =
      TimingReportToJsonLine(reports_.ping, config(), false, &directory_);
  EXPECT_EQ(line.find("nan"), std::string::npos) << line;
  auto parsed = JsonToFlatbuffer(
      line, *reflection::GetSchema(timing::StreamedReportBinarySchema::data()));
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  const auto* streamed =
      flatbuffers::GetRoot<timing::StreamedReport>(parsed->data());
  const timing::EntryPercentiles* watcher = streamed->percentiles()->Get(0);
  ASSERT_EQ(watcher->kind()->string_view(), "watcher");
  ASSERT_NE(watcher->paths(), nullptr);
  ASSERT_EQ(watcher->paths()->size(), 1u);
  const timing::PathPercentiles* path = watcher->paths()->Get(0);
  EXPECT_EQ(path->origin_id(), reports_.origin_id);
  EXPECT_EQ(path->hops(), 2u);
  EXPECT_EQ(path->route()->string_view(),
            "ping timer \"ping\" → /test aos.examples.Ping → pong → /test "
            "aos.examples.Pong → ping watcher");
  EXPECT_EQ(path->age()->p50_ns(), 1007615);  // Within 3.2 %.
  EXPECT_EQ(path->age()->max_ns(), 3000000);
  // The report's own paths are in it too.
  const timing::Path* reported =
      streamed->report()->watchers()->Get(0)->paths()->Get(0);
  EXPECT_EQ(reported->deadline_overruns(), 50u);
  // Timers have no paths; without a directory, no route.
  EXPECT_EQ(streamed->percentiles()->Get(1)->paths(), nullptr);
  EXPECT_THAT(TimingReportToJsonLine(reports_.ping, config(), false),
              Not(HasSubstr("route")));
}

TEST_F(PathsFormatTest, GnuplotTableAndWorstPathAge) {
  const std::string table = HistogramsAsGnuplotTable(
      {reports_.ping, reports_.pong}, config(), &directory_);
  // After every other block: ping's wakeup, pong's wakeup, then the paths.
  EXPECT_THAT(table, HasSubstr("\n\n\n# ping[3885755] path ping timer "
                               "\"ping\" → /test aos.examples.Ping → pong → "
                               "/test aos.examples.Pong → ping watcher age\n"));
  const size_t pong_wakeup = table.find("# pong[3885756] watcher");
  const size_t first_path = table.find(" path ");
  EXPECT_LT(pong_wakeup, first_path);
  const WorstPathAge worst =
      FindWorstPathAge({reports_.pong, reports_.ping}, &directory_);
  EXPECT_EQ(worst.paths, 2u);
  EXPECT_DOUBLE_EQ(worst.max_us, 3000);
  EXPECT_EQ(worst.what,
            "ping[3885755] path ping timer \"ping\" → /test aos.examples.Ping "
            "→ pong → /test aos.examples.Pong → ping watcher (2 hops)");
  EXPECT_EQ(
      FindWorstPathAge({DecodedFromJson(PingReport(kPingStart, kPingEnd))},
                       &directory_)
          .paths,
      0u);
}

// The summary on exit adds the paths of every window up.
TEST_F(PathsFormatTest, TheSummaryAddsPathsUp) {
  TimingReportAccumulator accumulator;
  accumulator.Add(reports_.ping);
  timing::ReportContents next = reports_.ping;
  next.header.monotonic_start_ns = kPingEnd;
  next.header.monotonic_end_ns = kPingEnd + 1'000'000'000;
  accumulator.Add(next);
  const std::vector<timing::ReportContents> summaries = accumulator.Summaries();
  ASSERT_EQ(summaries.size(), 1u);
  EXPECT_THAT(FormatTimingTable(summaries[0], config(), TimeUnit::kMicroseconds,
                                &directory_),
              HasSubstr("       2    200  1008  2982  3000      2000       "
                        "100  ping timer"));
}

}  // namespace
}  // namespace aos
