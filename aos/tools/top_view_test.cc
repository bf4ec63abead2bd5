#include "aos/tools/top_view.h"

#include <algorithm>

#include "aos/events/timing_report_test_data.h"
#include "aos/util/display_width.h"
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

TEST(TopViewTest, SlowestFirstWithTheGateMarked) {
  timing::ReportContents ping =
      DecodedFromJson(PingReport(kPingStart, kPingEnd));
  timing::ReportContents pong = ping;
  pong.header.name = "pong";
  pong.header.pid = 7;
  pong.watchers[0].channel_index = 1;
  pong.timers.clear();
  for (int i = 0; i < 100; ++i) {
    pong.watchers[0].wakeup_latency.Record(std::chrono::microseconds(20));
  }
  const std::string screen =
      RenderTop({ping, pong}, PingPongChannels().message(),
                {.unit = TimeUnit::kMicroseconds, .gate_us = 50});
  EXPECT_EQ(screen,
            "aos top: 2 applications, 3 callbacks; the latest report window "
            "of each, slowest p99 first; wakeup latency in us\n"
            "gate --max_wakeup_latency_us=50: 3 callbacks over it (!)\n"
            "\n"
            "  application              callback                              "
            "          count     p50     p99     max missed/lost\n"
            "! ping[3885755]            watcher /test aos.examples.Pong       "
            "            100    5.44     102     102           0\n"
            "! pong[7]                  watcher /test aos.examples.Ping       "
            "            100    20.2     102     102           0\n"
            "! ping[3885755]            timer ping                            "
            "            100       -       -     101           2\n");
  for (size_t start = 0; start < screen.size();) {
    const size_t end = screen.find('\n', start);
    EXPECT_LE(end - start, 120u);
    start = end + 1;
  }
  EXPECT_THAT(
      RenderTop({ping, pong}, PingPongChannels().message(), {.max_rows = 1}),
      HasSubstr("  ... 2 more\n"));
}

// Names come from whoever sent the report: the screen is cleared with ANSI
// codes, and a report must not be able to send its own.
TEST(TopViewTest, HostileNamesAreEscaped) {
  timing::ReportContents ping =
      DecodedFromJson(PingReport(kPingStart, kPingEnd));
  ping.header.name = "pi\x1b[2Jng";
  ping.timers[0].name = "t\x07";
  const std::string screen =
      RenderTop({ping}, PingPongChannels().message(), {});
  EXPECT_EQ(screen.find('\x1b'), std::string::npos) << screen;
  EXPECT_EQ(screen.find('\x07'), std::string::npos) << screen;
  EXPECT_THAT(screen, HasSubstr("\"pi\\x1b[2Jng\"[3885755]"));
}

// Paths in a block of their own, the oldest first, routes cut in the middle
// to keep rows within 120 columns.
TEST(TopViewTest, PathsOldestFirstWithTheirGateMarked) {
  testing::PingPongPaths paths;
  const testing::PingPongPathReports& reports = paths.reports();
  const PathDirectory& directory = paths.directory();
  const std::string screen =
      RenderTop({reports.ping, reports.pong}, paths.config(),
                {.unit = TimeUnit::kMicroseconds,
                 .directory = &directory,
                 .path_gate_us = 2000});
  EXPECT_THAT(screen,
              HasSubstr("gate --max_path_age_us=2000: 1 path over it (!)\n"));
  EXPECT_THAT(
      screen,
      HasSubstr(
          "\n  2 paths: age of the data at callback start, oldest max first\n"
          "  route                                                            "
          "        count     p50     p99     max    overruns\n"
          "! ping timer \"ping\" → /test aos.exam...t aos.examples.Pong → ping "
          "watcher    100    1008    2982    3000          50\n"
          "  ping timer \"ping\" → /test aos.examples.Ping → pong watcher    "
          "             100     500     500     500           -\n"));
  for (size_t start = 0; start < screen.size();) {
    const size_t end = screen.find('\n', start);
    EXPECT_LE(DisplayWidth(screen.substr(start, end - start)), 120u);
    start = end + 1;
  }
  // Without a directory, paths are named by origin id and hops.
  EXPECT_THAT(RenderTop({reports.pong}, paths.config(), {}),
              HasSubstr(UnresolvedPath(reports.origin_id, 1)));
}

// The widest line of `screen`, in columns.
size_t Widest(const std::string& screen) {
  size_t widest = 0;
  for (size_t start = 0; start < screen.size();) {
    const size_t end = screen.find('\n', start);
    widest = std::max(widest, DisplayWidth(screen.substr(start, end - start)));
    start = end + 1;
  }
  return widest;
}

// At 80 columns no row wraps (a wrapped row made every redraw leave
// duplicate lines), and names are cut in the middle: two bridges on
// different nodes still look different.
TEST(TopViewTest, FitsTheTerminalsWidthKeepingBothEndsOfNames) {
  timing::ReportContents pi1 =
      DecodedFromJson(PingReport(kPingStart, kPingEnd));
  pi1.header.name = "message_bridge_client";
  pi1.header.node = "pi1";
  timing::ReportContents pi2 = pi1;
  pi2.header.node = "pi2";
  const std::string screen =
      RenderTop({pi1, pi2}, PingPongChannels().message(), {.width = 80});
  EXPECT_LE(Widest(screen), 79u) << screen;
  EXPECT_THAT(screen, HasSubstr("\n  message...on pi1 "));
  EXPECT_THAT(screen, HasSubstr("\n  message...on pi2 "));
  // The heading is shortened to fit too.
  EXPECT_THAT(screen, ::testing::StartsWith(
                          "aos top: 2 applications, 4 callbacks, slowest p99 "
                          "first, us\n"));
  // Wide terminals keep the 120-column layout.
  EXPECT_EQ(RenderTop({pi1, pi2}, PingPongChannels().message(), {.width = 200}),
            RenderTop({pi1, pi2}, PingPongChannels().message(), {}));
  // Paths too.
  testing::PingPongPaths paths;
  const PathDirectory& directory = paths.directory();
  const std::string with_paths =
      RenderTop({paths.reports().ping, paths.reports().pong}, paths.config(),
                {.directory = &directory, .width = 80});
  EXPECT_LE(Widest(with_paths), 79u) << with_paths;
  EXPECT_THAT(with_paths, HasSubstr("ping timer"));
  EXPECT_THAT(with_paths, HasSubstr("ping watcher "));
}

// A screen taller than the terminal would scroll, and each redraw leave
// its top behind.
TEST(TopViewTest, KeepsToTheTerminalsHeight) {
  timing::ReportContents ping =
      DecodedFromJson(PingReport(kPingStart, kPingEnd));
  const std::string all = RenderTop({ping}, PingPongChannels().message(), {});
  const std::string kept =
      RenderTop({ping}, PingPongChannels().message(), {.height = 5});
  EXPECT_EQ(std::count(kept.begin(), kept.end(), '\n'), 4);
  EXPECT_THAT(kept, ::testing::EndsWith(
                        "  ... 2 more lines: a taller terminal shows them\n"));
  EXPECT_EQ(kept.substr(0, kept.find("  ...")),
            all.substr(0, kept.find("  ...")));
  EXPECT_EQ(RenderTop({ping}, PingPongChannels().message(), {.height = 100}),
            all);
}

}  // namespace
}  // namespace aos
