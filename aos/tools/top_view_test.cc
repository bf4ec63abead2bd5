#include "aos/tools/top_view.h"

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

}  // namespace
}  // namespace aos
